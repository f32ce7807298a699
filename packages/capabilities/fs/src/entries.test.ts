import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ListEntry } from "./list.js";
import { call, type Fixture, makeFixture, rejection } from "./test-support.js";

let fx: Fixture;
const at = (rel: string) => join(fx.ws, rel);

function put(rel: string, content = ""): void {
  mkdirSync(dirname(at(rel)), { recursive: true });
  writeFileSync(at(rel), content);
}

beforeAll(() => {
  fx = makeFixture();
  put("README.md", "# proj\n");
  put("src/index.ts", "export {};\n");
  put("src/lib/util.ts", "export const u = 1;\n");
  put("src.ts", "sorts after src/ and its children\n");
  put("node_modules/pkg/index.js");
  put(".git/HEAD", "ref: refs/heads/main\n");
  put("many/.keep");
  for (let i = 0; i < 1100; i++) writeFileSync(at(`many/f${String(i).padStart(4, "0")}.txt`), "");
  symlinkSync(at("src/index.ts"), at("entry.ts"));
});
afterAll(() => fx.cleanup());

describe("fs.list", () => {
  it("lists direct entries by default, directories with '/', skipped dirs not expanded", async () => {
    const r = await call(fx.ctx, "fs.list", {});
    expect(r.success).toBe(true);
    expect(r.summary).toBe(
      [
        ". — 2 files, 4 directories, 1 symlink (depth 1):",
        ".git/ (not expanded)",
        "README.md",
        `entry.ts -> ${at("src/index.ts")} (symlink, not followed)`,
        "many/",
        "node_modules/ (not expanded)",
        "src/",
        "src.ts",
      ].join("\n"),
    );
  });

  it("descends to depth with workspace-relative paths, children right after their directory", async () => {
    const r = await call(fx.ctx, "fs.list", { path: "src", depth: 3 });
    expect(r.summary).toBe("src/ — 2 files, 1 directory (depth 3):\nsrc/index.ts\nsrc/lib/\nsrc/lib/util.ts");
    const entries = (r.data as { entries: ListEntry[] }).entries;
    expect(entries.find((e) => e.path === "src/index.ts")).toEqual({
      path: "src/index.ts",
      type: "file",
      size: 11,
    });
  });

  it("caps the number of entries and says how to narrow", async () => {
    const r = await call(fx.ctx, "fs.list", { path: "many" });
    expect((r.data as { truncated: boolean }).truncated).toBe(true);
    expect(r.summary).toMatch(/\[listing stopped at 1000 entries; list a subdirectory/);
  });

  it("fails for a file or a missing directory, and names a bad depth", async () => {
    expect((await call(fx.ctx, "fs.list", { path: "README.md" })).summary).toMatch(
      /is a file, not a directory/,
    );
    expect((await call(fx.ctx, "fs.list", { path: "sorc" })).summary).toMatch(/Did you mean 'src'/);
    const error = await rejection(fx.ctx, "fs.list", { depth: 11 });
    expect(error.code).toBe("invalid_arguments");
    expect(error.property).toBe("depth");
  });
});

describe("fs.stat", () => {
  it("reports type, size, mtime and mode; symlinks as symlinks", async () => {
    const file = await call(fx.ctx, "fs.stat", { path: "README.md" });
    expect(file.data).toMatchObject({ exists: true, type: "file", size: 7, path: "README.md" });
    expect((file.data as { mode: string }).mode).toMatch(/^0[0-7]{3,4}$/);
    expect(file.summary).toMatch(/^README\.md: file, 7 bytes, modified \d{4}-\d\d-\d\dT/);
    expect((await call(fx.ctx, "fs.stat", { path: "src" })).data).toMatchObject({ type: "directory" });
    const link = await call(fx.ctx, "fs.stat", { path: "entry.ts" });
    expect(link.data).toMatchObject({ type: "symlink", target: at("src/index.ts"), path: "entry.ts" });
  });

  it("answers exists: false for a missing path, as a success", async () => {
    for (const path of ["nope.txt", "src/nope/deeper.ts", "README.md/child"]) {
      const r = await call(fx.ctx, "fs.stat", { path });
      expect(r.success, path).toBe(true);
      expect(r.data, path).toMatchObject({ exists: false });
      expect(r.summary).toMatch(/does not exist/);
    }
  });
});

describe("fs.move", () => {
  it("moves a file, creating the parents of `to`", async () => {
    put("move/a.txt", "A");
    const r = await call(fx.ctx, "fs.move", { from: "move/a.txt", to: "moved/deep/b.txt" });
    expect(r.summary).toBe("Moved file move/a.txt to moved/deep/b.txt.");
    expect(readFileSync(at("moved/deep/b.txt"), "utf8")).toBe("A");
    expect(existsSync(at("move/a.txt"))).toBe(false);
  });

  it("moves a directory", async () => {
    put("mdir/x/y.txt", "Y");
    expect((await call(fx.ctx, "fs.move", { from: "mdir", to: "mdir2" })).success).toBe(true);
    expect(readFileSync(at("mdir2/x/y.txt"), "utf8")).toBe("Y");
  });

  it("refuses to overwrite, and to move a directory into itself; nothing moves", async () => {
    put("m/one.txt", "1");
    put("m/two.txt", "2");
    const r = await call(fx.ctx, "fs.move", { from: "m/one.txt", to: "m/two.txt" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/`to` m\/two\.txt already exists \(file\); fs\.move never overwrites/);
    expect(readFileSync(at("m/one.txt"), "utf8")).toBe("1");
    expect(readFileSync(at("m/two.txt"), "utf8")).toBe("2");
    mkdirSync(at("m/empty"));
    expect((await call(fx.ctx, "fs.move", { from: "m/one.txt", to: "m/empty" })).success).toBe(false);
    const into = await call(fx.ctx, "fs.move", { from: "m", to: "m/inner/m" });
    expect(into.summary).toMatch(/into itself/);
    expect(existsSync(at("m/inner"))).toBe(false);
  });

  it("reports a missing source and names misspelt arguments", async () => {
    expect((await call(fx.ctx, "fs.move", { from: "m/nine.txt", to: "x.txt" })).summary).toMatch(
      /does not exist/,
    );
    expect((await rejection(fx.ctx, "fs.move", { from: "a", to: "b", overwrite: true })).property).toBe(
      "overwrite",
    );
  });
});

describe("fs.delete", () => {
  it("deletes a file and a directory recursively", async () => {
    put("del/file.txt", "12345");
    put("del/dir/a/b.txt");
    expect((await call(fx.ctx, "fs.delete", { path: "del/file.txt" })).summary).toBe(
      "Deleted del/file.txt (5 bytes).",
    );
    expect((await call(fx.ctx, "fs.delete", { path: "del/dir" })).summary).toBe(
      "Deleted directory del/dir/ (with 2 entries inside).",
    );
    expect(existsSync(at("del/dir"))).toBe(false);
  });

  it("refuses the workspace root, and a symlink (without touching its target)", async () => {
    for (const path of [".", fx.ws, "src/.."]) {
      const error = await rejection(fx.ctx, "fs.delete", { path });
      expect(error.code, path).toBe("policy_denied");
      expect(error.message).toMatch(/workspace root itself/);
    }
    expect((await rejection(fx.ctx, "fs.delete", { path: "entry.ts" })).message).toMatch(/symbolic link/);
    expect(existsSync(at("src/index.ts"))).toBe(true);
  });

  it("reports a missing path", async () => {
    const r = await call(fx.ctx, "fs.delete", { path: "gone.txt" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/does not exist/);
  });
});

describe("fs.mkdir", () => {
  it("creates nested directories and succeeds when the directory exists", async () => {
    expect((await call(fx.ctx, "fs.mkdir", { path: "a/b/c" })).summary).toBe("Created directory a/b/c/.");
    expect((await call(fx.ctx, "fs.mkdir", { path: "a/b/c" })).summary).toBe("a/b/c/ already exists.");
  });

  it("fails when a file is in the way", async () => {
    const r = await call(fx.ctx, "fs.mkdir", { path: "README.md" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/exists and is a file/);
    expect((await call(fx.ctx, "fs.mkdir", { path: "README.md/sub" })).success).toBe(false);
  });
});
