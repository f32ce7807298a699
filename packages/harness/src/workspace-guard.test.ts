import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
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
