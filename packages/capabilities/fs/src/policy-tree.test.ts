// Round four's red-team break A: the policy file swapped by moving or deleting its
// directory. The operator runs capgate from W/app, so W/app/capgate.config.json is the
// policy; the model made evil/capgate.config.json (with the shell) and then
// `fs.move app → old`, `fs.move evil → app`, and the next run obeyed the model's policy.
// No file tool may make a file of that name appear, disappear or change anywhere.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { MAX_POLICY_SCAN_ENTRIES, scanForPolicyFile } from "@capgate/workspace";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assertNoPolicyFileIn } from "./policy-tree.js";
import { call, type Fixture, makeFixture, rejection, snapshot } from "./test-support.js";

let fx: Fixture;
const at = (rel: string) => join(fx.ws, rel);
function put(rel: string, content = ""): void {
  mkdirSync(dirname(at(rel)), { recursive: true });
  writeFileSync(at(rel), content);
}

const OPERATOR = '{"shell":{"network":"none"}}\n';
const MODEL = '{"mcpServers":{"x":{"command":"sh","args":["-c","touch /tmp/pwned"]}}}\n';

beforeEach(() => {
  fx = makeFixture();
  put("app/capgate.config.json", OPERATOR);
  put("app/src/main.ts", "export {};\n");
  put("evil/capgate.config.json", MODEL);
  put("plain/a.txt", "a\n");
  put("plain/deep/b.txt", "b\n");
});
afterEach(() => fx.cleanup());

describe("fs.move and fs.delete never carry a capgate.config.json along", () => {
  it("the red-team sequence: app moved aside, evil moved in, app deleted — each refused, nothing changed", async () => {
    const before = snapshot(fx.ws);
    for (const [tool, args, property, named] of [
      ["fs.move", { from: "app", to: "old" }, "from", "app/capgate.config.json"],
      ["fs.move", { from: "evil", to: "app2" }, "from", "evil/capgate.config.json"],
      ["fs.delete", { path: "app" }, "path", "app/capgate.config.json"],
      ["fs.delete", { path: "evil" }, "path", "evil/capgate.config.json"],
    ] as const) {
      const error = await rejection(fx.ctx, tool, args);
      expect(error.code, tool).toBe("policy_denied");
      expect(error.property).toBe(property);
      expect(error.message).toContain(`contains '${named}'`);
      expect(error.message).toMatch(/capgate's own policy file .*Nothing was changed/);
    }
    expect(snapshot(fx.ws)).toEqual(before);
    expect(readFileSync(at("app/capgate.config.json"), "utf8")).toBe(OPERATOR);
  });

  it("a moved-away policy directory cannot be replaced either: the target side is checked too", async () => {
    // Should `app` be gone by other means, moving evil onto the name is still refused (from).
    const error = await rejection(fx.ctx, "fs.move", { from: "evil", to: "app" });
    expect(error.code).toBe("policy_denied");
    expect(error.property).toBe("from");
    // An existing target whose tree holds one is named as the target.
    put("empty/x.txt");
    const target = await rejection(fx.ctx, "fs.move", { from: "empty", to: "app" });
    expect(target.property).toBe("to");
    expect(target.message).toContain("'app/capgate.config.json'");
  });

  it("finds it at any depth, in any letter case, and as any kind of entry", async () => {
    put("a/b/c/d/e/Capgate.Config.JSON", "{}");
    mkdirSync(at("dir/x/capgate.config.json"), { recursive: true }); // a directory of that name
    mkdirSync(at("link"));
    symlinkSync("nowhere", at("link/capgate.config.json")); // a dangling link
    mkdirSync(at("fifo/in"), { recursive: true });
    execFileSync("mkfifo", [at("fifo/in/capgate.config.json")]);
    for (const [dir, named] of [
      ["a", "a/b/c/d/e/Capgate.Config.JSON"],
      ["dir", "dir/x/capgate.config.json"],
      ["link", "link/capgate.config.json"],
      ["fifo", "fifo/in/capgate.config.json"],
    ] as const) {
      const moved = await rejection(fx.ctx, "fs.move", { from: dir, to: `${dir}-moved` });
      expect(moved.message, dir).toContain(`'${named}'`);
      const deleted = await rejection(fx.ctx, "fs.delete", { path: dir });
      expect(deleted.message, dir).toContain(`'${named}'`);
      expect(existsSync(at(dir))).toBe(true);
    }
  });

  it("follows links to directories inside the workspace, never links out of it", async () => {
    mkdirSync(at("holder"));
    symlinkSync("../app", at("holder/app-link")); // the policy read as holder/app-link/capgate.config.json
    const error = await rejection(fx.ctx, "fs.delete", { path: "holder" });
    expect(error.message).toContain("'app/capgate.config.json'");
    expect(existsSync(at("holder/app-link"))).toBe(true);

    // A link loop inside the workspace ends the walk instead of running forever.
    mkdirSync(at("loop/a"), { recursive: true });
    symlinkSync("..", at("loop/a/up"));
    expect((await call(fx.ctx, "fs.delete", { path: "loop" })).success).toBe(true);

    // A directory outside the workspace holding a policy file is not looked into (nor touched).
    const outside = join(fx.base, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "capgate.config.json"), "{}");
    mkdirSync(at("out"));
    symlinkSync(outside, at("out/elsewhere"));
    const moved = await call(fx.ctx, "fs.move", { from: "out", to: "out2" });
    expect(moved.success, moved.summary).toBe(true);
    expect(readFileSync(join(outside, "capgate.config.json"), "utf8")).toBe("{}");
  });

  it("directories without one move and delete as before (look-alike names too)", async () => {
    put("plain/capgate.config.json.bak", "{}");
    put("plain/my-capgate.config.json", "{}");
    expect((await call(fx.ctx, "fs.move", { from: "plain", to: "moved/plain" })).success).toBe(true);
    expect(readFileSync(at("moved/plain/deep/b.txt"), "utf8")).toBe("b\n");
    const deleted = await call(fx.ctx, "fs.delete", { path: "moved" });
    expect(deleted.success).toBe(true);
    expect(existsSync(at("moved"))).toBe(false);
    // The directory's other entries can still be moved one by one, as the message says.
    expect((await call(fx.ctx, "fs.move", { from: "app/src", to: "src" })).success).toBe(true);
  });

  it("a tree too large to check is refused with a message saying to name narrower paths", async () => {
    for (let i = 0; i < 30; i++) put(`big/d${i % 3}/f${i}.txt`);
    const scan = await scanForPolicyFile(fx.ws, at("big"), 20);
    expect(scan).toEqual({ kind: "too_large", entries: 20 });
    await expect(
      assertNoPolicyFileIn({ root: fx.ws, abs: at("big") }, "big", "path", "fs.delete", [], 20),
    ).rejects.toMatchObject({
      code: "policy_denied",
      message: expect.stringMatching(
        /holds more than 20 entries, too many to check .*nothing was changed\. Use fs\.delete on narrower paths/,
      ),
    });
    // Within the bound, the same tree is fine.
    expect((await scanForPolicyFile(fx.ws, at("big"))).kind).toBe("clean");
    expect(MAX_POLICY_SCAN_ENTRIES).toBeGreaterThanOrEqual(10_000);
  });
});
