// Round four's red-team break D: fs.search with a catastrophic regex froze the server.
// `(a+)+$` against long lines of `a…a!` ran on the main thread inside a synchronous `vm`
// timeout, so the event loop (every other call, /healthz) stopped for the whole budget, and
// parallel searches added up. Matching now runs in a worker thread that is terminated when
// the budget runs out. Timing is asserted only loosely (CI machines are loaded): the
// witnesses are timer ticks and a second call that complete *while* the search runs.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegexSandbox } from "./regex-sandbox.js";
import { call, type Fixture, fsContext, makeFixture } from "./test-support.js";

let fx: Fixture;
beforeAll(() => {
  fx = makeFixture();
  mkdirSync(join(fx.ws, "redos"));
  // A large file of lines on which (a+)+$ backtracks exponentially (2^28 steps per line).
  writeFileSync(join(fx.ws, "redos", "evil.txt"), `${"a".repeat(28)}!\n`.repeat(20_000));
  writeFileSync(join(fx.ws, "small.txt"), "hello\n");
});
afterAll(() => fx.cleanup());

describe("fs.search never blocks the event loop on a model's regex", () => {
  it("a catastrophic pattern on a large file: timers fire and another call completes while it runs", async () => {
    const ctx = fsContext(fx.ws, { timeoutMs: 4_000 }); // a regex budget of 3 s
    let ticks = 0;
    const timer = setInterval(() => ticks++, 25);
    let readDoneAt: number | undefined;
    let searchDoneAt: number | undefined;
    try {
      const search = call(ctx, "fs.search", { pattern: "(a+)+$", path: "redos" }).then((r) => {
        searchDoneAt = performance.now();
        return r;
      });
      // A trivial call sent after the search started.
      await new Promise((r) => setTimeout(r, 200));
      const ticksBeforeRead = ticks;
      const read = await call(fx.ctx, "fs.read", { path: "small.txt" });
      readDoneAt = performance.now();
      expect(read.success).toBe(true);
      const r = await search;
      expect(r.success).toBe(false);
      expect(r.summary).toMatch(/ran out of its time budget/);
      expect(r.data).toMatchObject({ timedOut: true });
      // The read finished before the search did: the loop was free while the regex ran.
      expect(readDoneAt).toBeLessThan(searchDoneAt!);
      // And timers kept firing throughout (with a blocked loop there would be none until the end).
      expect(ticksBeforeRead).toBeGreaterThan(0);
      expect(ticks).toBeGreaterThan(ticksBeforeRead + 5);
    } finally {
      clearInterval(timer);
    }
  }, 30_000);

  it("parallel catastrophic searches each end on their own budget", async () => {
    // How much they overlap is a matter of speed (and of the machine's cores): not asserted here.
    const ctx = fsContext(fx.ws, { timeoutMs: 3_000 }); // 2 s each
    const results = await Promise.all(
      [0, 1, 2, 3].map(() => call(ctx, "fs.search", { pattern: "(a+)+$", path: "redos" })),
    );
    for (const r of results) expect(r.data).toMatchObject({ timedOut: true });
  }, 60_000);

  it("an aborted search stops its worker at once", async () => {
    const controller = new AbortController();
    const ctx = fsContext(fx.ws, { timeoutMs: 60_000 }, controller.signal); // a regex budget of 20 s

    setTimeout(() => controller.abort(), 300);
    const r = await call(ctx, "fs.search", { pattern: "(a+)+$", path: "redos" }).catch((e: Error) => ({
      success: false,
      summary: e.message,
    }));
    expect(r.success).toBe(false);
    // Ended by the abort, not by running out of its budget.
    expect(r.summary).not.toMatch(/time budget/);
  }, 60_000);

  it("ordinary patterns keep JavaScript RegExp semantics (lookaround, backreferences, \\u escapes)", async () => {
    writeFileSync(join(fx.ws, "js.txt"), "foo=foo\nbar=baz\nprice: 42€\nx\u0041y\n");
    const search = (pattern: string) => call(fx.ctx, "fs.search", { pattern, path: "js.txt" });
    expect((await search("(\\w+)=\\1")).summary).toContain("js.txt:1: foo=foo");
    expect((await search("(?<=price: )\\d+(?=€)")).summary).toContain("js.txt:3: price: 42€");
    expect((await search("x\\u0041y")).summary).toContain("js.txt:4: xAy");
  });

  it("the sandbox reuses its worker across batches and can be used again after a timeout", async () => {
    const sandbox = new RegexSandbox("b+", 5_000);
    try {
      expect((await sandbox.match(["abba", "ccc"], 10)).matches).toEqual([[0, 1, 1, "abba"]]);
      expect((await sandbox.match(["x\nbb"], 10)).matches).toEqual([[0, 2, 0, "bb"]]);
    } finally {
      sandbox.close();
    }
    const slow = new RegexSandbox("(a+)+$", 300);
    try {
      expect(await slow.match([`${"a".repeat(40)}!`], 10)).toEqual({ matches: [], timedOut: true });
      expect(await slow.match(["a"], 10)).toEqual({ matches: [], timedOut: true }); // budget spent
    } finally {
      slow.close();
    }
  }, 30_000);
});
