import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchMatch } from "./search.js";
import { call, type Fixture, fsContext, makeFixture, rejection } from "./test-support.js";

let fx: Fixture;

function put(rel: string, content: string | Buffer): void {
  mkdirSync(dirname(join(fx.ws, rel)), { recursive: true });
  writeFileSync(join(fx.ws, rel), content);
}

beforeAll(() => {
  fx = makeFixture();
  put(".gitignore", "dist/\n*.log\n!keep.log\n");
  put("src/a.ts", "export function alpha() {}\nconst x = alpha();\n");
  put("src/b.js", "alpha in js\n");
  put("src/.gitignore", "generated.ts\n");
  put("src/generated.ts", "alpha generated\n");
  put("src/nested/generated.ts", "alpha re-included\n");
  put("src/nested/.gitignore", "!generated.ts\n");
  put("dist/out.js", "alpha dist\n");
  put("debug.log", "alpha log\n");
  put("keep.log", "alpha keep\n");
  put("node_modules/pkg/index.js", "alpha nm\n");
  put("src/node_modules/x.js", "alpha nested nm\n");
  put(".git/config", "alpha git\n");
  put(".github/workflows/ci.yml", "name: alpha ci\n");
  put("bin.dat", Buffer.from("alpha\0binary"));
  put("huge.txt", `alpha\n${"z".repeat(5 * 1024 * 1024)}\n`);
  put("long.txt", `${"-".repeat(1000)}alpha${"-".repeat(1000)}\n`);
  put("crlf.txt", "first\r\nalpha here\r\n");
});
afterAll(() => fx.cleanup());

const paths = (data: unknown) =>
  [...new Set((data as { matches: SearchMatch[] }).matches.map((m) => m.path))].sort();

describe("fs.search", () => {
  it("finds matching lines as path:line: text, respecting nested .gitignore files", async () => {
    const r = await call(fx.ctx, "fs.search", { pattern: "alpha" });
    expect(r.success).toBe(true);
    expect(paths(r.data)).toEqual([
      ".github/workflows/ci.yml",
      "crlf.txt",
      "keep.log",
      "long.txt",
      "src/a.ts",
      "src/b.js",
      "src/nested/generated.ts",
    ]);
    expect(r.summary).toContain("src/a.ts:1: export function alpha() {}");
    expect(r.summary).toContain("src/a.ts:2: const x = alpha();");
    expect(r.summary).toContain("crlf.txt:2: alpha here\n");
    expect(r.summary).toMatch(/\[1 binary file skipped\]/);
    expect(r.summary).toMatch(/skipped, larger than 4\.0 MB: huge\.txt \(5\.0 MB\)/);
  });

  it("shows a window around the match on a long line", async () => {
    const r = await call(fx.ctx, "fs.search", { pattern: "alpha", path: "long.txt" });
    const line = r.summary.split("\n").find((l) => l.startsWith("long.txt:1: "))!;
    expect(line).toMatch(/^long\.txt:1: …-+alpha-+…$/);
    expect(line.length).toBeLessThan(300);
  });

  it("treats pattern as a case-sensitive JavaScript regex", async () => {
    const r = await call(fx.ctx, "fs.search", { pattern: "alpha\\(\\);$" });
    expect((r.data as { matches: SearchMatch[] }).matches).toEqual([
      { path: "src/a.ts", line: 2, column: 10, text: "const x = alpha();" },
    ]);
    const upper = await call(fx.ctx, "fs.search", { pattern: "ALPHA" });
    expect(upper.summary).toMatch(/^No matches for \/ALPHA\//);
  });

  it("filters by glob, relative to path or the workspace, a bare name matching at any depth", async () => {
    expect(paths((await call(fx.ctx, "fs.search", { pattern: "alpha", glob: "*.ts" })).data)).toEqual([
      "src/a.ts",
      "src/nested/generated.ts",
    ]);
    expect(paths((await call(fx.ctx, "fs.search", { pattern: "alpha", glob: "src/*.js" })).data)).toEqual([
      "src/b.js",
    ]);
    expect(
      paths((await call(fx.ctx, "fs.search", { pattern: "alpha", path: "src", glob: "nested/**" })).data),
    ).toEqual(["src/nested/generated.ts"]);
  });

  it("searches many files across several batches", async () => {
    for (let i = 0; i < 300; i++) put(`many/f${i}.txt`, `nothing\nneedle ${i}\n`);
    const r = await call(fx.ctx, "fs.search", { pattern: "needle \\d+", path: "many", max_results: 1000 });
    expect((r.data as { matches: SearchMatch[] }).matches).toHaveLength(300);
    expect(r.summary).toMatch(/^300 matches for \/needle \\d\+\/ in 300 files under many \(300 searched\):/);
  });

  it("stops at max_results and says so", async () => {
    const r = await call(fx.ctx, "fs.search", { pattern: "alpha", max_results: 2 });
    expect((r.data as { matches: SearchMatch[] }).matches).toHaveLength(2);
    expect(r.summary).toMatch(/^2\+ matches/);
    expect(r.summary).toContain(
      "[stopped at max_results=2; narrow the pattern, path or glob to see the rest]",
    );
  });

  it("searches a single file, or an explicitly named ignored directory", async () => {
    expect(paths((await call(fx.ctx, "fs.search", { pattern: "alpha", path: "src/a.ts" })).data)).toEqual([
      "src/a.ts",
    ]);
    const dist = await call(fx.ctx, "fs.search", { pattern: "alpha", path: "dist" });
    expect(paths(dist.data)).toEqual(["dist/out.js"]);
    expect(dist.summary).toContain("dist is gitignored");
  });

  it("refuses an invalid regex as invalid_arguments naming `pattern`", async () => {
    const error = await rejection(fx.ctx, "fs.search", { pattern: "alpha(" });
    expect(error.code).toBe("invalid_arguments");
    expect(error.property).toBe("pattern");
    expect(error.message).toMatch(/not a valid JavaScript regular expression/);
    expect((await rejection(fx.ctx, "fs.search", { query: "alpha" })).property).toBe("query");
  });

  it("stops a catastrophically backtracking pattern instead of hanging", async () => {
    put("redos/evil.txt", `${"a".repeat(40)}!\n`);
    const ctx = fsContext(fx.ws, { timeoutMs: 2500 });
    const r = await call(ctx, "fs.search", { pattern: "(a+)+$", path: "redos" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/ran out of its time budget/);
    expect(r.data).toMatchObject({ timedOut: true });
  }, 20_000);

  it("reports a missing path with a suggestion", async () => {
    const r = await call(fx.ctx, "fs.search", { pattern: "alpha", path: "sorc" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/does not exist.*Did you mean 'src'/);
  });
});

describe("fs.glob", () => {
  const files = (data: unknown) => (data as { files: string[] }).files;

  it("finds files by pattern, respecting .gitignore and skipping node_modules and .git", async () => {
    const r = await call(fx.ctx, "fs.glob", { pattern: "**/*.ts" });
    expect(files(r.data)).toEqual(["src/a.ts", "src/nested/generated.ts"]);
    expect(r.summary).toBe('2 files under the workspace match "**/*.ts":\nsrc/a.ts\nsrc/nested/generated.ts');
    expect(files((await call(fx.ctx, "fs.glob", { pattern: "*.log" })).data)).toEqual(["keep.log"]);
    expect(files((await call(fx.ctx, "fs.glob", { pattern: "**/*.js" })).data)).toEqual(["src/b.js"]);
  });

  it("includes dot files, starts from path, and supports braces", async () => {
    expect(files((await call(fx.ctx, "fs.glob", { pattern: ".github/**" })).data)).toEqual([
      ".github/workflows/ci.yml",
    ]);
    expect(files((await call(fx.ctx, "fs.glob", { pattern: "*.{ts,js}", path: "src" })).data)).toEqual([
      "src/a.ts",
      "src/b.js",
      "src/nested/generated.ts",
    ]);
    expect(files((await call(fx.ctx, "fs.glob", { pattern: "./src/*.ts" })).data)).toEqual(["src/a.ts"]);
  });

  it("answers no match as a success that mentions what is skipped", async () => {
    const r = await call(fx.ctx, "fs.glob", { pattern: "**/*.rs" });
    expect(r.success).toBe(true);
    expect(r.summary).toMatch(
      /^No files under the workspace match "\*\*\/\*\.rs".*node_modules and \.git are skipped/,
    );
  });

  it("refuses a file as path", async () => {
    const r = await call(fx.ctx, "fs.glob", { pattern: "*", path: "src/a.ts" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/`path` must be a directory/);
  });
});
