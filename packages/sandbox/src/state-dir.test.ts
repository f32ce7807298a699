// The state directory must never be reachable as the workspace: every surface that pairs the
// two (the harness, the sandbox before each command, the Claude Code hook through it) asks
// `stateDirPlacementProblem`, which compares directories, not paths.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { bashArgv, sandboxCommand } from "./sandbox.js";
import {
  assertStateDirPlacement,
  STATE_DIR_ENTRIES,
  stateDirFor,
  stateDirPlacementProblem,
} from "./state-dir.js";

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

  it("refuses a state directory reached through a symbolic link inside the workspace (the model could replace the link)", () => {
    const ws = fresh();
    const real = fresh();
    symlinkSync(real, join(ws, ".cg"));
    expect(stateDirPlacementProblem(ws, join(ws, ".cg"))).toBe(
      `is reached through the symbolic link '${join(ws, ".cg")}' inside the workspace, which a command could replace`,
    );
    mkdirSync(join(ws, "sub"));
    symlinkSync(real, join(ws, "sub", "link"));
    expect(stateDirPlacementProblem(ws, join(ws, "sub", "link", "state"))).toMatch(/symbolic link/);
    // A link outside the workspace on the way is the user's, not the model's.
    const outsideLink = join(root, `out-link${n++}`);
    symlinkSync(real, outsideLink);
    expect(stateDirPlacementProblem(ws, outsideLink)).toBeUndefined();
  });

  it("refuses a state directory whose path leads, through a link outside, to a link inside the workspace", () => {
    const ws = fresh();
    mkdirSync(join(ws, "real", "state"), { recursive: true });
    symlinkSync(join(ws, "real"), join(ws, "lnk"));
    const out = fresh();
    symlinkSync(join(ws, "lnk", "state"), join(out, "home"));
    expect(stateDirPlacementProblem(ws, join(out, "home"))).toBe(
      `is reached through the symbolic link '${join(ws, "lnk")}' inside the workspace, which a command could replace`,
    );
    // A chain of links outside the workspace to a directory outside it is the user's.
    const elsewhere = fresh();
    symlinkSync(elsewhere, join(out, "a"));
    symlinkSync(join(out, "a"), join(out, "b"));
    expect(stateDirPlacementProblem(ws, join(out, "b"))).toBeUndefined();
  });

  it("resolves `..` in a link's target as the kernel does: a state directory that is the workspace that way is refused", () => {
    const ws = fresh();
    const deep = fresh();
    mkdirSync(join(deep, "a", "b", "c"), { recursive: true });
    const out = fresh();
    mkdirSync(join(out, "q"));
    symlinkSync(join(deep, "a", "b", "c"), join(out, "q", "jump"));
    // jump/../../../.. climbs from deep/a/b/c (the kernel's answer: the workspace), not from
    // out/q (the text's: a path that does not exist). Written out: `join` would collapse it.
    const target = `${out}/q/jump/../../../../${ws.split("/").pop()}`;
    symlinkSync(target, join(out, "l1"));
    expect(stateDirPlacementProblem(ws, join(out, "l1"))).toBe("is the workspace");
    expect(stateDirPlacementProblem(join(out, "l1"), ws)).toBe("is the workspace");
  });

  it("refuses a state directory whose link climbs out of a workspace directory with `..` (existing or not)", () => {
    const ws = fresh();
    mkdirSync(join(ws, "sub"));
    const out = fresh();
    mkdirSync(join(out, "real"));
    // Written out, not joined: `join` would collapse the `..` before the link holds it.
    const rel = (dir: string) => `${ws}/${dir}/../../${out.split("/").pop()}/real`;
    symlinkSync(rel("sub"), join(out, "l1"));
    expect(stateDirPlacementProblem(ws, join(out, "l1"))).toBe(
      `is reached through '${join(ws, "sub")}/..' inside the workspace, which a command could replace`,
    );
    symlinkSync(rel("nope"), join(out, "l2"));
    expect(stateDirPlacementProblem(ws, join(out, "l2"))).toMatch(/nope\/\.\.' inside the workspace/);
  });

  it("refuses a state directory whose links never resolve (a loop)", () => {
    const ws = fresh();
    const out = fresh();
    symlinkSync(join(out, "b"), join(out, "a"));
    symlinkSync(join(out, "a"), join(out, "b"));
    expect(stateDirPlacementProblem(ws, join(out, "a", "state"))).toBe(
      "does not resolve (a loop of symbolic links, or one that cannot be read)",
    );
  });

  it("refuses a memory file hard-linked from the workspace", () => {
    const ws = fresh();
    const state = fresh();
    writeFileSync(join(ws, "mem"), "m");
    linkSync(join(ws, "mem"), join(state, "memory.jsonl"));
    expect(stateDirPlacementProblem(ws, state)).toBe(
      "has its 'memory.jsonl' entry hard-linked under another name, which the hide list cannot hide",
    );
  });

  it("refuses a state directory whose entry leads into the workspace (a link of it)", () => {
    const ws = fresh();
    const state = fresh();
    mkdirSync(join(ws, "data"));
    symlinkSync(join(ws, "data"), join(state, "mcp-tools"));
    expect(stateDirPlacementProblem(ws, state)).toBe("has its 'mcp-tools' entry inside the workspace");
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
  it("a state directory inside the workspace that does not exist yet is created first, so the command cannot see or write its journal", async () => {
    const ws = fresh();
    const state = join(ws, ".cgstate");
    const wrapped = await sandboxCommand(
      bashArgv(
        "ls -A .cgstate 2>&1; mkdir -p .cgstate/sandboxes && echo forged > .cgstate/sandboxes/evil.json; echo done",
      ),
      {
        workspace: ws,
        cwd: ws,
        env: { PATH: process.env.PATH },
        stateDir: state,
        shell: { network: "none" },
      },
    );
    const out = execFileSync(wrapped.file, wrapped.args, { env: wrapped.env, encoding: "utf8" });
    wrapped.release();
    expect(out).toContain("done");
    expect(out).not.toMatch(/\.json/); // the command saw no journal record
    expect(readdirSync(join(state, "sandboxes"))).toEqual([]); // nor could it plant one
  });

  it("refuses a default state directory that cannot be created and would lie in the workspace (a file on its path the command could replace)", async () => {
    const ws = fresh();
    writeFileSync(join(ws, "cache"), "notes");
    const saved = process.env.CAPGATE_HOME;
    process.env.CAPGATE_HOME = join(ws, "cache", "cg");
    try {
      await expect(
        sandboxCommand(bashArgv("true"), { workspace: ws, cwd: ws, env: {}, stateDir: fresh() }),
      ).rejects.toMatchObject({ code: "invalid_workspace", property: "stateDir" });
      // A dangling link outside the workspace whose target lies in it: the same.
      const out = fresh();
      symlinkSync(join(ws, ".cgh"), join(out, "home"));
      process.env.CAPGATE_HOME = join(out, "home");
      await expect(
        sandboxCommand(bashArgv("true"), { workspace: ws, cwd: ws, env: {}, stateDir: fresh() }),
      ).rejects.toMatchObject({ code: "invalid_workspace" });
    } finally {
      if (saved === undefined) delete process.env.CAPGATE_HOME;
      else process.env.CAPGATE_HOME = saved;
    }
  });

  it("the default state directory ($CAPGATE_HOME) inside the workspace is hidden too when a config names another", async () => {
    const ws = fresh();
    const home = join(ws, ".cghome");
    mkdirSync(join(home, "runs"), { recursive: true });
    writeFileSync(join(home, "runs", "t.json"), "trace");
    const saved = process.env.CAPGATE_HOME;
    process.env.CAPGATE_HOME = home;
    try {
      const wrapped = await sandboxCommand(
        bashArgv('cat .cghome/runs/t.json 2>/dev/null; echo "[$(ls -A .cghome)]"'),
        {
          workspace: ws,
          cwd: ws,
          env: { PATH: process.env.PATH },
          stateDir: fresh(),
          shell: { network: "none" },
        },
      );
      const out = execFileSync(wrapped.file, wrapped.args, { env: wrapped.env, encoding: "utf8" });
      wrapped.release();
      expect(out).not.toContain("trace");
      expect(out.trim()).toBe("[]");
    } finally {
      if (saved === undefined) delete process.env.CAPGATE_HOME;
      else process.env.CAPGATE_HOME = saved;
    }
  });

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

describe("stateDirFor", () => {
  it("a config's `~` and `~/…` are the home directory; other relative paths the config's directory", () => {
    const env = { HOME: "/home/u" };
    expect(stateDirFor("~", "/proj", env)).toBe("/home/u");
    expect(stateDirFor("~/.cg", "/proj", env)).toBe("/home/u/.cg");
    expect(stateDirFor("state", "/proj", env)).toBe("/proj/state");
    expect(stateDirFor(undefined, "/proj", { CAPGATE_HOME: "/srv/cg" })).toBe("/srv/cg");
  });

  it("a relative CAPGATE_HOME is refused: it would name another directory from each working directory", () => {
    expect(() => stateDirFor(undefined, "/proj", { CAPGATE_HOME: ".cgh" })).toThrow(
      expect.objectContaining({ code: "invalid_config", property: "CAPGATE_HOME" }),
    );
    expect(() => stateDirFor(undefined, "/proj", { CAPGATE_HOME: ".cgh" })).toThrow(
      /must be an absolute path/,
    );
  });
});
