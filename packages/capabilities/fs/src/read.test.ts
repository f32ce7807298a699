import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReadPage } from "./read.js";
import { call, type Fixture, fsContext, makeFixture, rejection } from "./test-support.js";

let fx: Fixture;
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

beforeAll(() => {
  fx = makeFixture();
  mkdirSync(join(fx.ws, "src"));
  writeFileSync(join(fx.ws, "src", "index.ts"), "export const a = 1;\n\tindented();\n");
  writeFileSync(join(fx.ws, "big.txt"), `${numbered(5000)}\n`);
  writeFileSync(join(fx.ws, "empty.txt"), "");
  writeFileSync(join(fx.ws, "no-eol.txt"), "one\ntwo");
  writeFileSync(join(fx.ws, "crlf.txt"), "alpha\r\nbeta\r\n");
  writeFileSync(
    join(fx.ws, "image.png"),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  );
  writeFileSync(join(fx.ws, "minified.js"), `${"x".repeat(300_000)}\nsecond line\n`);
  writeFileSync(join(fx.ws, "utf8.txt"), `${"é".repeat(3000)}\n`);
});
afterAll(() => fx.cleanup());

describe("fs.read", () => {
  it("returns the lines exactly as in the file under a 'lines A–B of N' header", async () => {
    const r = await call(fx.ctx, "fs.read", { path: "src/index.ts" });
    expect(r.success).toBe(true);
    expect(r.summary).toBe("src/index.ts — lines 1–2 of 2\nexport const a = 1;\n\tindented();");
    expect(r.data).toMatchObject({ startLine: 1, endLine: 2, totalLines: 2, nextOffset: null });
  });

  it("accepts an absolute path inside the workspace and reports it relative", async () => {
    const r = await call(fx.ctx, "fs.read", { path: join(fx.ws, "no-eol.txt") });
    expect(r.summary).toBe("no-eol.txt — lines 1–2 of 2\none\ntwo");
  });

  it("paginates with offset and limit and says where the next page starts", async () => {
    const first = await call(fx.ctx, "fs.read", { path: "big.txt" });
    const page = first.data as ReadPage;
    expect(page).toMatchObject({ startLine: 1, endLine: 2000, totalLines: 5000, nextOffset: 2001 });
    expect(first.summary.split("\n")[0]).toBe("big.txt — lines 1–2000 of 5000");
    expect(first.summary).toContain('next page: fs.read {"path":"big.txt","offset":2001}');

    const middle = await call(fx.ctx, "fs.read", { path: "big.txt", offset: 2001, limit: 3 });
    expect(middle.summary).toBe(
      'big.txt — lines 2001–2003 of 5000\nline 2001\nline 2002\nline 2003\n[2997 more lines; next page: fs.read {"path":"big.txt","offset":2004}]',
    );
    const last = await call(fx.ctx, "fs.read", { path: "big.txt", offset: 4999 });
    expect(last.data).toMatchObject({
      startLine: 4999,
      endLine: 5000,
      nextOffset: null,
      content: "line 4999\nline 5000",
    });
  });

  it("stops a page at the byte budget and continues exactly where it stopped", async () => {
    const ctx = fsContext(fx.ws, { readBytes: 2000 });
    const pages: ReadPage[] = [];
    let offset: number | null = 1;
    while (offset !== null && pages.length < 100) {
      const r = await call(ctx, "fs.read", { path: "big.txt", offset });
      const page = r.data as ReadPage;
      expect(page.bytes).toBeLessThanOrEqual(2000);
      pages.push(page);
      offset = page.nextOffset;
    }
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.map((p) => p.content).join("\n")).toBe(numbered(5000));
  });

  it("keeps a page within the output cap, so the executor never cuts it", async () => {
    const ctx = fsContext(fx.ws, { outputBytes: 4096 });
    const r = await call(ctx, "fs.read", { path: "big.txt" });
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(4096);
    expect(r.summary).not.toContain("bytes truncated");
    expect(r.summary).toMatch(/next page: fs\.read/);
  });

  it("shows the head of a line longer than the budget and moves on to the next line", async () => {
    const ctx = fsContext(fx.ws, { readBytes: 4096 });
    const r = await call(ctx, "fs.read", { path: "minified.js" });
    const page = r.data as ReadPage;
    expect(page.cutLine).toEqual({ line: 1, bytes: 300_000, shownBytes: 4096 });
    expect(page.nextOffset).toBe(2);
    expect(r.summary).toContain("[line 1 is 293.0 KB; only its first 4.0 KB are shown]");
    const next = await call(ctx, "fs.read", { path: "minified.js", offset: 2 });
    expect((next.data as ReadPage).content).toBe("second line");
  });

  it("cuts an over-long line on a UTF-8 character boundary", async () => {
    const ctx = fsContext(fx.ws, { readBytes: 1025 });
    const page = (await call(ctx, "fs.read", { path: "utf8.txt" })).data as ReadPage;
    expect(page.content).toBe("é".repeat(512));
  });

  it("shows CRLF files without CR and says so", async () => {
    const r = await call(fx.ctx, "fs.read", { path: "crlf.txt" });
    expect(r.summary).toContain("CRLF line endings");
    expect((r.data as ReadPage).content).toBe("alpha\nbeta");
  });

  it("refuses binary files with a clear message", async () => {
    const r = await call(fx.ctx, "fs.read", { path: "image.png" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/image\.png is a binary file \(12 bytes; it contains NUL bytes\)/);
  });

  it("reports an empty file, an offset past the end, a directory and a missing path", async () => {
    expect((await call(fx.ctx, "fs.read", { path: "empty.txt" })).summary).toBe(
      "empty.txt is empty (0 bytes).",
    );
    const past = await call(fx.ctx, "fs.read", { path: "src/index.ts", offset: 10 });
    expect(past.success).toBe(false);
    expect(past.summary).toMatch(/offset 10 is past the end of src\/index\.ts, which has 2 lines/);
    const dir = await call(fx.ctx, "fs.read", { path: "src" });
    expect(dir.summary).toMatch(/src is a directory; use fs.list/);
    const missing = await call(fx.ctx, "fs.read", { path: "src/indx.ts" });
    expect(missing.success).toBe(false);
    expect(missing.summary).toMatch(/does not exist.*Did you mean 'src\/index\.ts'\?/);
  });

  it("names the bad property of invalid arguments", async () => {
    for (const [args, property] of [
      [{ file: "a.txt" }, "file"],
      [{ path: "a.txt", offset: 0 }, "offset"],
      [{ path: "a.txt", limit: "10" }, "limit"],
      [{}, "path"],
    ] as const) {
      const error = await rejection(fx.ctx, "fs.read", args);
      expect(error.code).toBe("invalid_arguments");
      expect(error.property, JSON.stringify(args)).toBe(property);
    }
  });
});
