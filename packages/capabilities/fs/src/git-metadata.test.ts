import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Fixture, makeFixture, rejection, snapshot } from "./test-support.js";

// These drive real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);
const describeGit = (name: string, body: () => void) =>
  describe.skipIf(gitPart.skip)(name + gitPart.note, body);

// fs.* never write under a `.git` directory — the workspace's own, a nested repository's,
// a submodule's — nor through a link to one: hooks and config there are programs git runs.

let fx: Fixture;

beforeAll(() => {
  fx = makeFixture();
  execFileSync("git", ["init", "-q"], { cwd: fx.ws });
  mkdirSync(join(fx.ws, "vendor", "lib"), { recursive: true });
  execFileSync("git", ["init", "-q"], { cwd: join(fx.ws, "vendor", "lib") });
  writeFileSync(join(fx.ws, "ok.txt"), "fine\n");
  writeFileSync(join(fx.ws, "src.txt"), "to move\n");
  symlinkSync(join(fx.ws, ".git"), join(fx.ws, "meta-link"));
  mkdirSync(join(fx.ws, "dir"));
});
afterAll(() => fx.cleanup());

const TARGETS = [
  ".git/hooks/pre-commit",
  ".git/config",
  ".git",
  "./.git/info/../hooks/post-checkout",
  "sub/../.git/hooks/x",
  "vendor/lib/.git/config",
  "vendor/lib/.git/hooks/pre-commit",
  ".GIT/hooks/pre-commit",
  "meta-link/hooks/pre-commit",
];

describeGit("writes under .git are refused for every writing tool", () => {
  it.each(TARGETS)("%s", async (target) => {
    const before = snapshot(fx.ws);
    const attempts: [string, Record<string, unknown>, string][] = [
      ["fs.write", { path: target, content: "#!/bin/sh\ntouch /tmp/pwned\n" }, "path"],
      ["fs.patch", { path: target, old: "[core]", new: "[core]\n\tfsmonitor = /tmp/x" }, "path"],
      ["fs.mkdir", { path: target }, "path"],
      ["fs.delete", { path: target }, "path"],
      ["fs.move", { from: "src.txt", to: target }, "to"],
      ["fs.move", { from: target, to: "stolen" }, "from"],
    ];
    for (const [tool, args, property] of attempts) {
      // meta-link/… resolves into .git through the link; ".GIT" does not exist on Linux.
      const error = await rejection(fx.ctx, tool, args);
      expect(error.code, `${tool} ${JSON.stringify(args)}: ${error.message}`).toBe("policy_denied");
      expect(error.property).toBe(property);
      expect(error.message).toMatch(/git repository's metadata directory .* Use the git tools/);
    }
    expect(snapshot(fx.ws)).toEqual(before);
  });

  it("reads under .git still work, and ordinary writes beside it do too", async () => {
    const read = await call(fx.ctx, "fs.read", { path: ".git/HEAD" });
    expect(read.success).toBe(true);
    expect(read.summary).toContain("ref: refs/heads/");
    expect((await call(fx.ctx, "fs.write", { path: ".gitignore", content: "dist\n" })).success).toBe(true);
    expect((await call(fx.ctx, "fs.write", { path: "dir/.github/x.yml", content: "a: 1\n" })).success).toBe(
      true,
    );
    expect((await call(fx.ctx, "fs.write", { path: "dir/my.git/x", content: "x\n" })).success).toBe(true);
  });
});
