import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Fixture, makeFixture, rejection, snapshot } from "./test-support.js";

// Every way out of the workspace, for every tool that takes a path. Each must be a
// `policy_denied` rejection (thrown before the handler runs) that leaves the files inside
// and outside the workspace exactly as they were.

let fx: Fixture;
let outside: string;

beforeAll(() => {
  fx = makeFixture();
  outside = join(fx.base, "outside");
  mkdirSync(outside);
  mkdirSync(join(fx.base, "proj2"));
  writeFileSync(join(outside, "secret.txt"), "secret\n");
  writeFileSync(join(fx.base, "proj2", "x.txt"), "secret in sibling\n");
  writeFileSync(join(fx.ws, "victim.txt"), "victim\n");
  symlinkSync(join(outside, "secret.txt"), join(fx.ws, "file-out"));
  symlinkSync(outside, join(fx.ws, "dir-out"));
  symlinkSync(join(fx.ws, "nowhere"), join(fx.ws, "dangling"));
  symlinkSync(join(fx.ws, "loop-b"), join(fx.ws, "loop-a"));
  symlinkSync(join(fx.ws, "loop-a"), join(fx.ws, "loop-b"));
});
afterAll(() => fx.cleanup());

// [form, path, message the denial must contain]
const FORMS: [string, () => string, RegExp][] = [
  ["../ climbing out", () => "../outside/secret.txt", /climbs out of the workspace/],
  ["nested ../ climbing out", () => "sub/../../outside/secret.txt", /climbs out of the workspace/],
  ["absolute path outside", () => join(outside, "secret.txt"), /outside the workspace/],
  ["/etc/passwd", () => "/etc/passwd", /outside the workspace/],
  ["sibling with the same prefix (proj2 vs proj)", () => `${fx.ws}2/x.txt`, /outside the workspace/],
  ["sibling through ..", () => "../proj2/x.txt", /climbs out/],
  ["symlinked file pointing out", () => "file-out", /outside the workspace|symbolic link/],
  ["symlinked directory pointing out", () => "dir-out/secret.txt", /outside the workspace/],
  ["dangling symlink", () => "dangling", /dangling|symbolic link/],
  ["symlink loop", () => "loop-a", /loop|symbolic link/],
  ["NUL byte", () => "victim.txt\0.png", /NUL byte/],
  ["component over 255 bytes", () => `${"x".repeat(300)}.txt`, /limit is 255/],
  ["path over 4096 bytes (multibyte)", () => "é/".repeat(1400), /limit is 4096/],
];

// [tool, arguments for a path]
const TOOLS: [string, (p: string) => Record<string, unknown>][] = [
  ["fs.read", (p) => ({ path: p })],
  ["fs.write", (p) => ({ path: p, content: "pwned" })],
  ["fs.patch", (p) => ({ path: p, old: "secret", new: "pwned" })],
  ["fs.move (from)", (p) => ({ from: p, to: "moved.txt" })],
  ["fs.move (to)", (p) => ({ from: "victim.txt", to: p })],
  ["fs.delete", (p) => ({ path: p })],
  ["fs.list", (p) => ({ path: p })],
  ["fs.search", (p) => ({ pattern: "secret", path: p })],
  ["fs.glob", (p) => ({ pattern: "**/*", path: p })],
  ["fs.stat", (p) => ({ path: p })],
  ["fs.mkdir", (p) => ({ path: p })],
];

const CASES = TOOLS.flatMap(([tool, args]) =>
  FORMS.map(([form, path, why]) => [tool, form, args, path, why] as const),
);

describe("fs path confinement", () => {
  it.each(CASES)("%s refuses %s", async (tool, _form, args, path, why) => {
    const before = { inside: snapshot(fx.ws), outside: snapshot(fx.base) };
    const error = await rejection(fx.ctx, tool.split(" ")[0]!, args(path()));
    expect(error.code).toBe("policy_denied");
    expect(error.message).toMatch(why);
    const property = Object.entries(args(path())).find(([, v]) => v === path())?.[0];
    expect(error.property).toBe(property);
    expect({ inside: snapshot(fx.ws), outside: snapshot(fx.base) }).toEqual(before);
  });

  it("refuses escapes in the policy step, before an approver is asked", async () => {
    const asked: string[] = [];
    const ctx = {
      ...fx.ctx,
      policy: { approval: "always" as const },
      approve: async (request: { tool: string }) => {
        asked.push(request.tool);
        return true;
      },
    };
    const error = await rejection(ctx, "fs.write", { path: "../outside/new.txt", content: "x" });
    expect(error.code).toBe("policy_denied");
    expect(asked).toEqual([]);
    // An allowed path does reach the approver.
    expect((await call(ctx, "fs.write", { path: "approved.txt", content: "x" })).success).toBe(true);
    expect(asked).toEqual(["fs.write"]);
  });

  it("refuses a path longer than the schema allows as invalid_arguments naming `path`", async () => {
    const error = await rejection(fx.ctx, "fs.read", { path: "a/".repeat(2100) });
    expect(error.code).toBe("invalid_arguments");
    expect(error.property).toBe("path");
  });

  it("refuses glob patterns that leave `path`", async () => {
    for (const [tool, args, property] of [
      ["fs.glob", { pattern: "../outside/*" }, "pattern"],
      ["fs.glob", { pattern: `${outside}/*` }, "pattern"],
      ["fs.search", { pattern: "secret", glob: "../**" }, "glob"],
    ] as const) {
      const error = await rejection(fx.ctx, tool, args);
      expect(error.code, JSON.stringify(args)).toBe("policy_denied");
      expect(error.property).toBe(property);
    }
  });

  it("never lists, searches or globs through a symlinked directory that points out", async () => {
    const listed = await call(fx.ctx, "fs.list", { depth: 3 });
    expect(listed.summary).toContain("dir-out -> ");
    expect(listed.summary).not.toContain("dir-out/secret.txt");
    const searched = await call(fx.ctx, "fs.search", { pattern: "secret" });
    expect(searched.summary).not.toContain("secret.txt");
    expect(searched.summary).not.toContain("sibling");
    const globbed = await call(fx.ctx, "fs.glob", { pattern: "**/*" });
    expect(globbed.summary).toContain("victim.txt");
    expect(globbed.summary).not.toContain("secret");
  });
});
