// The state directory must never be reachable as the workspace: every surface that pairs the
// two (the harness, the sandbox before each command, the Claude Code hook through it) asks
// `stateDirPlacementProblem`, which compares directories, not paths.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { bashArgv, sandboxCommand } from "./sandbox.js";
import { assertStateDirPlacement, STATE_DIR_ENTRIES, stateDirPlacementProblem } from "./state-dir.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-state-place-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => {
  const dir = join(root, `d${n++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

describe("stateDirPlacementProblem", () => {
  it("refuses a state directory that is the workspace, by path or through a link to it", () => {
    const ws = fresh();
    expect(stateDirPlacementProblem(ws, ws)).toBe("is the workspace");
    const link = join(root, `link${n++}`);
    symlinkSync(ws, link);
    expect(stateDirPlacementProblem(ws, link)).toBe("is the workspace");
    expect(stateDirPlacementProblem(link, ws)).toBe("is the workspace");
    expect(stateDirPlacementProblem(join(ws, "."), `${ws}/`)).toBe("is the workspace");
  });

  it.each(STATE_DIR_ENTRIES.filter((e) => !e.includes(".")))(
    "refuses a workspace inside the state directory's '%s'",
    (entry) => {
      const state = fresh();
      const ws = join(state, entry, "deeper");
      mkdirSync(ws, { recursive: true });
      expect(stateDirPlacementProblem(ws, state)).toBe(`holds the workspace in its '${entry}' entry`);
      expect(stateDirPlacementProblem(join(state, entry), state)).toBe(
        `holds the workspace in its '${entry}' entry`,
      );
    },
  );

  it("refuses a workspace reached through a link that leads into the state directory's entries", () => {
    const state = fresh();
    mkdirSync(join(state, "runs"));
    const link = join(root, `runs-link${n++}`);
    symlinkSync(join(state, "runs"), link);
    expect(stateDirPlacementProblem(link, state)).toBe("holds the workspace in its 'runs' entry");
  });

  it("accepts what the hide list covers or what holds no state: separate, state inside the workspace, a worker's checkout under the state directory, a state directory not created yet", () => {
    const ws = fresh();
    const state = fresh();
    expect(stateDirPlacementProblem(ws, state)).toBeUndefined();
    expect(stateDirPlacementProblem(ws, join(ws, ".capgate"))).toBeUndefined();
    mkdirSync(join(ws, ".capgate"));
    expect(stateDirPlacementProblem(ws, join(ws, ".capgate"))).toBeUndefined();
    const checkout = join(state, "work", "run-1");
    mkdirSync(checkout, { recursive: true });
    expect(stateDirPlacementProblem(checkout, state)).toBeUndefined();
    expect(stateDirPlacementProblem(ws, join(root, "not-yet"))).toBeUndefined();
  });

  it("as a refusal: invalid_workspace on stateDir, naming both directories and the fix", () => {
    const ws = fresh();
    let caught: unknown;
    try {
      assertStateDirPlacement(ws, ws);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: "invalid_workspace", property: "stateDir" });
    expect(String((caught as Error).message)).toContain(`'${ws}' is the workspace`);
    expect(String((caught as Error).message)).toMatch(/Set "stateDir" in capgate\.config\.json/);
  });
});

const system = needs(["bwrap"]);

describe.skipIf(system.skip)(`sandboxCommand${system.note}`, () => {
  it("refuses a state directory the command could reach before recovering or journalling anything", async () => {
    const ws = fresh();
    await expect(
      sandboxCommand(bashArgv("true"), { workspace: ws, cwd: ws, env: {}, stateDir: ws }),
    ).rejects.toMatchObject({ code: "invalid_workspace", property: "stateDir" });
    expect(readdirSync(ws)).toEqual([]);
    const state = fresh();
    const inRuns = join(state, "runs", "ws");
    mkdirSync(inRuns, { recursive: true });
    await expect(
      sandboxCommand(bashArgv("true"), { workspace: inRuns, cwd: inRuns, env: {}, stateDir: state }),
    ).rejects.toMatchObject({ code: "invalid_workspace" });
    expect(existsSync(join(state, "sandboxes"))).toBe(false);
  });
});
