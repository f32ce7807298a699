import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "./config.js";
import { createHarness } from "./harness.js";

// `capgate run --workspace ~` says clearly why not, before anything is created; a project
// under the home directory is what it should be.
const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-home-ws-")));
const home = join(root, "home");
const project = join(home, "code", "proj");
mkdirSync(project, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a workspace at or above HOME", { timeout: 60_000 }, () => {
  it.each([
    ["is the home directory", home, /is your home directory/],
    ["contains the home directory", root, /contains your home directory '.*home'/],
  ])("%s: refused, naming it and the fix, with nothing created", async (_what, workspace, why) => {
    const stateDir = join(root, `state-${Math.random().toString(36).slice(2)}`);
    const attempt = createHarness({
      workspace,
      stateDir,
      processEnv: { HOME: home, PATH: process.env.PATH },
    });
    await expect(attempt).rejects.toMatchObject({ code: "invalid_workspace", property: "workspace" });
    await expect(attempt).rejects.toThrow(why);
    await expect(attempt).rejects.toThrow(/--workspace <a project directory>/);
    expect(existsSync(stateDir)).toBe(false);
  });

  it("a home reached through a symlink is recognised too", async () => {
    const { symlinkSync } = await import("node:fs");
    const alias = join(root, "home-alias");
    symlinkSync(home, alias);
    await expect(
      createHarness({ workspace: home, stateDir: join(root, "s2"), processEnv: { HOME: alias } }),
    ).rejects.toMatchObject({ code: "invalid_workspace" });
  });

  it("a project directory under the home directory is fine", async () => {
    const h = await createHarness({
      workspace: project,
      stateDir: join(root, "state-ok"),
      processEnv: { HOME: home, PATH: process.env.PATH },
    });
    try {
      expect(h.workspace).toBe(project);
    } finally {
      await h.close();
    }
  });
});

// Traces, memory, MCP logins and the sandbox journal must be out of the model's reach: the
// hide list covers a state directory inside the workspace, but not one that is the workspace.
describe("a state directory the workspace would expose", { timeout: 60_000 }, () => {
  it("the workspace itself (as `capgate` run from ~/.capgate): refused, naming both and the fix", async () => {
    const ws = join(root, "capgate-home");
    mkdirSync(ws);
    const attempt = createHarness({ workspace: ws, stateDir: ws, processEnv: { HOME: home } });
    await expect(attempt).rejects.toMatchObject({ code: "invalid_workspace", property: "stateDir" });
    await expect(attempt).rejects.toThrow(/is the workspace .*Set "stateDir" in capgate\.config\.json/);
    expect(readdirSync(ws)).toEqual([]);
  });

  it("a config's stateDir of '.' (the workspace) is refused the same way", async () => {
    const ws = join(root, "dot-state");
    mkdirSync(ws);
    await expect(
      createHarness({
        workspace: ws,
        config: parseConfig({ stateDir: "." }, { baseDir: ws }),
        processEnv: { HOME: home },
      }),
    ).rejects.toMatchObject({ code: "invalid_workspace", property: "stateDir" });
  });

  it("a state directory inside the workspace stays accepted (the hide list covers it)", async () => {
    const ws = join(root, "with-state-inside");
    mkdirSync(ws);
    const h = await createHarness({
      workspace: ws,
      stateDir: join(ws, ".capgate"),
      processEnv: { HOME: home },
    });
    await h.close();
  });
});
