import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, type Fixture, makeFixture, rejection } from "./test-support.js";

let fx: Fixture;
const file = (rel: string) => join(fx.ws, rel);
const read = (rel: string) => readFileSync(file(rel), "utf8");

beforeAll(() => {
  fx = makeFixture();
  mkdirSync(file("src"));
  symlinkSync(file("src/real.ts"), file("link.ts"));
});
afterAll(() => fx.cleanup());

describe("fs.write", () => {
  it("creates a file and its missing parent directories, reporting bytes and lines", async () => {
    const r = await call(fx.ctx, "fs.write", { path: "deep/er/new.txt", content: "héllo\nworld\n" });
    expect(r.success).toBe(true);
    expect(r.summary).toBe("Created deep/er/new.txt and its missing parent directories: 13 bytes, 2 lines.");
    expect(read("deep/er/new.txt")).toBe("héllo\nworld\n");
    expect(r.data).toMatchObject({ path: "deep/er/new.txt", bytes: 13, lines: 2, created: true });
  });

  it("replaces a file atomically, keeps its permissions and leaves no temp file", async () => {
    writeFileSync(file("src/run.sh"), "old");
    chmodSync(file("src/run.sh"), 0o750);
    const r = await call(fx.ctx, "fs.write", { path: "src/run.sh", content: "#!/bin/sh\necho new\n" });
    expect(r.summary).toBe("Replaced src/run.sh (was 3 bytes): 19 bytes, 2 lines.");
    expect(read("src/run.sh")).toBe("#!/bin/sh\necho new\n");
    expect(statSync(file("src/run.sh")).mode & 0o777).toBe(0o750);
    expect(readdirSync(file("src")).filter((n) => n.includes("capgate-tmp"))).toEqual([]);
  });

  it("writes an empty file", async () => {
    expect((await call(fx.ctx, "fs.write", { path: "empty.txt", content: "" })).summary).toBe(
      "Created empty.txt: 0 bytes, 0 lines.",
    );
    expect(read("empty.txt")).toBe("");
  });

  it("refuses to write through a symlink, even one pointing inside the workspace", async () => {
    writeFileSync(file("src/real.ts"), "real\n");
    const error = await rejection(fx.ctx, "fs.write", { path: "link.ts", content: "through the link" });
    expect(error.code).toBe("policy_denied");
    expect(error.message).toMatch(/writes never go through a symlink/);
    expect(read("src/real.ts")).toBe("real\n");
  });

  it("fails on a directory and on a parent that is a file, writing nothing", async () => {
    const dir = await call(fx.ctx, "fs.write", { path: "src", content: "x" });
    expect(dir.success).toBe(false);
    expect(dir.summary).toMatch(/src is a directory/);
    writeFileSync(file("plain.txt"), "plain");
    const under = await call(fx.ctx, "fs.write", { path: "plain.txt/child.txt", content: "x" });
    expect(under.success).toBe(false);
    expect(under.summary).toMatch(/'plain\.txt' is not a directory/);
    expect(read("plain.txt")).toBe("plain");
  });

  it("names the missing property", async () => {
    const error = await rejection(fx.ctx, "fs.write", { path: "a.txt" });
    expect(error.code).toBe("invalid_arguments");
    expect(error.property).toBe("content");
  });
});

describe("fs.patch", () => {
  const source = "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 1;\n}\n";
  beforeEach(() => writeFileSync(file("src/code.ts"), source));

  it("replaces the one occurrence and reports where", async () => {
    const r = await call(fx.ctx, "fs.patch", {
      path: "src/code.ts",
      old: "function b() {\n  return 1;",
      new: "function b() {\n  const two = 2;\n  return two;",
    });
    expect(r.success).toBe(true);
    expect(r.summary).toBe(
      "Patched src/code.ts at line 5: 2 lines replaced by 3; the file now has 8 lines (78 bytes).",
    );
    expect(read("src/code.ts")).toBe(
      "function a() {\n  return 1;\n}\n\nfunction b() {\n  const two = 2;\n  return two;\n}\n",
    );
  });

  it("inserts `new` literally: $&, $1, $$ and $` are not replacement patterns", async () => {
    for (const special of ["$&", "$1", "$$", "$`", "$'", "$<name>"]) {
      writeFileSync(file("src/money.ts"), "price = PLACEHOLDER;\n");
      const r = await call(fx.ctx, "fs.patch", {
        path: "src/money.ts",
        old: "PLACEHOLDER",
        new: `(${special})`,
      });
      expect(r.success, special).toBe(true);
      expect(read("src/money.ts")).toBe(`price = (${special});\n`);
    }
  });

  it("matches `old` literally, not as a regex", async () => {
    writeFileSync(file("src/re.ts"), "a.b\naxb\n");
    const r = await call(fx.ctx, "fs.patch", { path: "src/re.ts", old: "a.b", new: "A.B" });
    expect(r.success).toBe(true);
    expect(read("src/re.ts")).toBe("A.B\naxb\n");
  });

  it("fails when `old` is missing, leaving the file byte-identical, and points at a near match", async () => {
    const before = readFileSync(file("src/code.ts"));
    const mtime = statSync(file("src/code.ts")).mtimeMs;
    const r = await call(fx.ctx, "fs.patch", {
      path: "src/code.ts",
      old: "function  b(){\n return 1;",
      new: "x",
    });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(
      /`old` was not found in src\/code\.ts \(0 occurrences\); the file is unchanged/,
    );
    expect(r.summary).toMatch(/apart from whitespace is at line 5/);
    expect(readFileSync(file("src/code.ts")).equals(before)).toBe(true);
    expect(statSync(file("src/code.ts")).mtimeMs).toBe(mtime);

    const none = await call(fx.ctx, "fs.patch", { path: "src/code.ts", old: "nowhere at all", new: "x" });
    expect(none.summary).toMatch(/Read the file with fs\.read/);
  });

  it("fails when `old` occurs more than once, naming the count and lines, file byte-identical", async () => {
    const before = readFileSync(file("src/code.ts"));
    const r = await call(fx.ctx, "fs.patch", { path: "src/code.ts", old: "  return 1;", new: "  return 2;" });
    expect(r.success).toBe(false);
    expect(r.summary).toBe(
      "`old` occurs 2 times in src/code.ts (lines 2, 6); it must occur exactly once. Include more surrounding lines to make it unique; the file is unchanged.",
    );
    expect(r.data).toMatchObject({ occurrences: 2, lines: [2, 6] });
    expect(readFileSync(file("src/code.ts")).equals(before)).toBe(true);
  });

  it("counts overlapping occurrences", async () => {
    writeFileSync(file("src/aaa.txt"), "aaa");
    const r = await call(fx.ctx, "fs.patch", { path: "src/aaa.txt", old: "aa", new: "b" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/occurs 2 times/);
    expect(read("src/aaa.txt")).toBe("aaa");
  });

  it("patches a CRLF file with `old` as fs.read shows it, keeping CRLF", async () => {
    writeFileSync(file("src/win.txt"), "one\r\ntwo\r\nthree\r\n");
    const r = await call(fx.ctx, "fs.patch", { path: "src/win.txt", old: "one\ntwo", new: "1\n2" });
    expect(r.success).toBe(true);
    expect(read("src/win.txt")).toBe("1\r\n2\r\nthree\r\n");
  });

  it("keeps the file's permissions", async () => {
    chmodSync(file("src/code.ts"), 0o640);
    await call(fx.ctx, "fs.patch", { path: "src/code.ts", old: "function a", new: "function first" });
    expect(statSync(file("src/code.ts")).mode & 0o777).toBe(0o640);
  });

  it("refuses identical old/new, binary files, missing files and symlinks", async () => {
    expect((await call(fx.ctx, "fs.patch", { path: "src/code.ts", old: "a", new: "a" })).summary).toMatch(
      /identical/,
    );
    writeFileSync(file("src/bin.dat"), Buffer.from([1, 0, 2, 0]));
    expect(
      (await call(fx.ctx, "fs.patch", { path: "src/bin.dat", old: "\u0001", new: "x" })).summary,
    ).toMatch(/binary file/);
    const missing = await call(fx.ctx, "fs.patch", { path: "src/cod.ts", old: "a", new: "b" });
    expect(missing.success).toBe(false);
    expect(missing.summary).toMatch(/does not exist.*Did you mean 'src\/code\.ts'/);
    writeFileSync(file("src/real.ts"), "real\n");
    const link = await rejection(fx.ctx, "fs.patch", { path: "link.ts", old: "real", new: "fake" });
    expect(link.code).toBe("policy_denied");
    expect(read("src/real.ts")).toBe("real\n");
  });

  it("names the bad property", async () => {
    const empty = await rejection(fx.ctx, "fs.patch", { path: "src/code.ts", old: "", new: "x" });
    expect(empty.property).toBe("old");
    const misspelt = await rejection(fx.ctx, "fs.patch", { path: "src/code.ts", old_text: "a", new: "b" });
    expect(misspelt.property).toBe("old_text");
  });
});

describe.runIf(process.platform === "linux")("writeAtomic checks where the file landed", () => {
  it("a directory swapped for a link to outside before the write: refused, nothing left outside", async () => {
    const {
      mkdtempSync: mk,
      mkdirSync: md,
      symlinkSync: ln,
      readdirSync: ls,
      realpathSync: rp,
    } = await import("node:fs");
    const { tmpdir: td } = await import("node:os");
    const { join: j } = await import("node:path");
    const { writeAtomic } = await import("./text-file.js");
    const base = rp(mk(j(td(), "capgate-write-swap-")));
    md(j(base, "outside"));
    ln(j(base, "outside"), j(base, "d"));
    // The guard approved base/d/x.txt when d was a directory; now d is a link.
    const e = await writeAtomic(j(base, "d", "x.txt"), "PWN").then(
      () => undefined,
      (error: unknown) => error as { code?: string },
    );
    expect(e?.code).toBe("policy_denied");
    expect(ls(j(base, "outside"))).toEqual([]);
  });
});
