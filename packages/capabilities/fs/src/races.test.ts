import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, type Fixture, makeFixture } from "./test-support.js";

/**
 * A command the model started in the background (shell.start) swaps a workspace directory
 * for a link to outside and back, as fast as it can, while the file tools work under that
 * directory. Whatever the interleaving, nothing outside may be removed, created or moved
 * into: each change is made inside the directory the guard approved, held open (Linux).
 */
const ROUNDS = 150;
/** A delete's window between the guard and the unlink is narrower: more rounds (measured: the name-based delete removed 5 outside entries in 1,600 calls). */
const DELETE_ROUNDS = 500;

describe.runIf(process.platform === "linux")("file tools racing a directory swapper", () => {
  let fx: Fixture;
  let outside: string;
  let swapper: ChildProcess | undefined;

  beforeEach(() => {
    fx = makeFixture();
    outside = join(fx.base, "outside");
    mkdirSync(outside);
    mkdirSync(join(fx.ws, "a"));
    mkdirSync(join(fx.ws, "b"));
  });
  afterEach(() => {
    swapper?.kill("SIGKILL");
    swapper = undefined;
    fx.cleanup();
  });

  /** Swap ws/a for a link to ../outside and back, in a loop, until killed. */
  async function startSwapper(): Promise<void> {
    // Python's loop makes the system calls back to back (a state lasts microseconds, as a
    // compiled swapper's would); bash runs a process per step.
    const python = [
      "import os",
      "while True:",
      "  try:",
      "    os.rename('a', 'a.d'); os.symlink('../outside', 'a'); os.unlink('a'); os.rename('a.d', 'a')",
      "  except OSError:",
      "    pass",
    ].join("\n");
    swapper = spawn("python3", ["-c", python], { cwd: fx.ws, stdio: "ignore" });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  async function stopSwapper(): Promise<void> {
    const child = swapper;
    swapper = undefined;
    if (!child) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }

  /** Files with the same names inside ws/a and outside. */
  function twins(make: (dir: string, i: number) => void, rounds = ROUNDS): void {
    for (let i = 0; i < rounds; i++) {
      make(join(fx.ws, "a"), i);
      make(outside, i);
    }
  }

  it("fs.delete of files and trees never removes anything outside", async () => {
    twins((dir, i) => {
      writeFileSync(join(dir, `f${i}`), "x");
      mkdirSync(join(dir, `t${i}`, "in"), { recursive: true });
      writeFileSync(join(dir, `t${i}`, "in", "x"), "x");
    }, DELETE_ROUNDS);
    await startSwapper();
    for (let i = 0; i < DELETE_ROUNDS; i++) {
      await call(fx.ctx, "fs.delete", { path: `a/f${i}` }).catch(() => undefined);
      await call(fx.ctx, "fs.delete", { path: `a/t${i}` }).catch(() => undefined);
    }
    await stopSwapper();
    const left = readdirSync(outside);
    expect(left).toHaveLength(DELETE_ROUNDS * 2);
    for (let i = 0; i < DELETE_ROUNDS; i++) expect(existsSync(join(outside, `t${i}`, "in", "x"))).toBe(true);
  }, 120_000);

  it("fs.write and fs.mkdir never create anything outside", async () => {
    await startSwapper();
    for (let i = 0; i < ROUNDS; i++) {
      await call(fx.ctx, "fs.write", { path: `a/w${i}/x.txt`, content: "PWN" }).catch(() => undefined);
      await call(fx.ctx, "fs.mkdir", { path: `a/m${i}/deep` }).catch(() => undefined);
    }
    await stopSwapper();
    expect(readdirSync(outside)).toEqual([]);
  }, 120_000);

  it("fs.move never takes from outside nor puts anything there", async () => {
    twins((dir, i) => writeFileSync(join(dir, `f${i}`), dir === outside ? "outside" : "inside"));
    await startSwapper();
    for (let i = 0; i < ROUNDS; i++) {
      await call(fx.ctx, "fs.move", { from: `a/f${i}`, to: `b/f${i}` }).catch(() => undefined);
      await call(fx.ctx, "fs.move", { from: `b/f${i}`, to: `a/g${i}` }).catch(() => undefined);
    }
    await stopSwapper();
    expect(readdirSync(outside).sort()).toEqual(Array.from({ length: ROUNDS }, (_, i) => `f${i}`).sort());
  }, 120_000);

  it("fs.list, fs.glob and fs.stat never describe what is outside", async () => {
    // Found by an outside review: they checked the path, then read the directory again by
    // name — a swap in between listed the outside directory (names, sizes, modes).
    writeFileSync(join(outside, "outside-secret-name"), "x");
    writeFileSync(join(fx.ws, "a", "inside"), "x");
    await startSwapper();
    const seen: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      for (const [tool, args] of [
        ["fs.list", { path: "a" }],
        ["fs.glob", { pattern: "a/**" }],
        ["fs.stat", { path: "a/outside-secret-name" }],
      ] as const) {
        const result = await call(fx.ctx, tool, args).catch((error: unknown) => ({ summary: String(error) }));
        const text = JSON.stringify(result);
        if (text.includes("outside-secret-name") && !(tool === "fs.stat" && !text.includes('"exists":true')))
          seen.push(`${tool}: ${text.slice(0, 200)}`);
      }
    }
    await stopSwapper();
    expect(seen).toEqual([]);
  }, 120_000);
});
