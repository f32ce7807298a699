import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { leaveBehind, processesWith, uniqueSleep } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { HeadTailCapture, tailLines } from "./output-capture.js";
import { runProcess } from "./process-runner.js";
import { minimalEnv } from "./tool-context.js";

const dir = mkdtempSync(join(tmpdir(), "capgate-proc-"));
const env = minimalEnv();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Wait for a state of the process table (polled, up to 15 s). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 750; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe("runProcess", () => {
  it("reports exit codes and both streams", async () => {
    const r = await runProcess({ file: "sh", args: ["-c", "echo out; echo err >&2; exit 3"], cwd: dir, env });
    expect(r).toMatchObject({ exitCode: 3, signal: null, stdout: "out\n", stderr: "err\n", timedOut: false });
    expect((await runProcess({ file: "true", cwd: dir, env })).exitCode).toBe(0);
  });

  it("runs no shell: metacharacters in arguments stay literal", async () => {
    const r = await runProcess({ file: "echo", args: ["$HOME; touch pwned"], cwd: dir, env });
    expect(r.stdout).toBe("$HOME; touch pwned\n");
    expect(existsSync(join(dir, "pwned"))).toBe(false);
  });

  it("passes only the given environment", async () => {
    process.env.CAPGATE_TEST_SECRET = "s3cret";
    try {
      const r = await runProcess({ file: "env", cwd: dir, env: { PATH: env.PATH, ONLY: "this" } });
      expect(r.stdout).toContain("ONLY=this");
      expect(r.stdout).not.toContain("s3cret");
    } finally {
      delete process.env.CAPGATE_TEST_SECRET;
    }
  });

  it("feeds input on stdin; without input stdin is empty", async () => {
    expect((await runProcess({ file: "cat", cwd: dir, env, input: "hello" })).stdout).toBe("hello");
    expect((await runProcess({ file: "cat", cwd: dir, env })).stdout).toBe("");
  });

  it("throws spawn_failed for a missing program", async () => {
    const e = await runProcess({ file: "capgate-no-such-program", cwd: dir, env }).catch((x: unknown) => x);
    expect(CapgateError.isInstance(e) && e.code).toBe("spawn_failed");
    expect(String((e as Error).message)).toContain("capgate-no-such-program");
  });

  it("on timeout kills the whole process group, grandchildren included", async () => {
    // Two grandchildren: one ordinary, one that ignores SIGTERM and needs the SIGKILL. The
    // timeout is far above the time the script needs to start them (it prints "started"
    // after both forks).
    const m = uniqueSleep();
    const script = `sleep ${m} & (trap '' TERM; exec sleep ${m}) & echo started; wait`;
    const r = await runProcess({
      file: "sh",
      args: ["-c", script],
      cwd: dir,
      env,
      timeoutMs: 3_000,
      killGraceMs: 300,
    });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.stdout).toBe("started\n");
    expect(processesWith(m)).toEqual([]);
  }, 20_000);

  it("kills what the child left running when it exits", async () => {
    const m = uniqueSleep();
    const r = await runProcess({
      file: "sh",
      args: ["-c", `sleep ${m} > /dev/null 2>&1 & echo done`],
      cwd: dir,
      env,
      killGraceMs: 300,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("done\n");
    expect(processesWith(m)).toEqual([]);
  }, 20_000);

  it("nothing the program started outlives it: setsid and a double fork included", async () => {
    // A process group holds none of the setsid ones; the program's pid namespace holds all.
    const m = uniqueSleep();
    const r = await runProcess({ file: "bash", args: ["-c", leaveBehind(m)], cwd: dir, env });
    expect(r.exitCode).toBe(0);
    expect(processesWith(m)).toEqual([]);
  }, 20_000);

  it("abort kills the group and reports aborted", async () => {
    const controller = new AbortController();
    const m = uniqueSleep();
    const pending = runProcess({
      file: "bash",
      args: ["-c", `${leaveBehind(m)}; echo started; wait`],
      cwd: dir,
      env,
      signal: controller.signal,
    });
    await until(() => processesWith(m).length === 3, "the three sleeps");
    controller.abort();
    const r = await pending;
    expect(r.aborted).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(r.signal).toBe("SIGTERM");
    expect(processesWith(m)).toEqual([]);
    // Already aborted: nothing is started.
    const again = await runProcess({
      file: "touch",
      args: ["never"],
      cwd: dir,
      env,
      signal: controller.signal,
    });
    expect(again.aborted).toBe(true);
    expect(existsSync(join(dir, "never"))).toBe(false);
  }, 20_000);

  it("caps a 20 MB flood to head and tail while streaming", async () => {
    const r = await runProcess({
      file: "sh",
      args: ["-c", "printf HEAD; head -c 20000000 /dev/zero | tr '\\0' x; printf TAIL"],
      cwd: dir,
      env,
      maxOutputBytes: 4096,
    });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.stdoutBytes).toBe(20_000_008);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(4096);
    expect(r.stdout.startsWith("HEADxxx")).toBe(true);
    expect(r.stdout.endsWith("xxxTAIL")).toBe(true);
    expect(r.stdout).toMatch(/…\[\d+ bytes truncated\]…/);
    const omitted = Number(/…\[(\d+) bytes truncated\]…/.exec(r.stdout)![1]);
    expect(omitted + Buffer.byteLength(r.stdout.replace(/\n…\[\d+ bytes truncated\]…\n/, ""))).toBe(
      20_000_008,
    );
  }, 30_000);
});

describe("HeadTailCapture", () => {
  it("holds about maxBytes however much is pushed", () => {
    const cap = new HeadTailCapture(10_000);
    const chunk = new Uint8Array(64 * 1024).fill(120);
    for (let i = 0; i < 320; i++) cap.push(chunk); // 20 MiB
    expect(cap.totalBytes).toBe(320 * 64 * 1024);
    expect(cap.peakRetainedBytes).toBeLessThanOrEqual(10_000 + 64 * 1024);
    const r = cap.result();
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(10_000);
    expect(r.omittedBytes).toBeGreaterThan(20_000_000);
  });

  it("cuts on UTF-8 boundaries and keeps short output whole", () => {
    for (const ch of ["é", "€", "😀"]) {
      for (let max = 60; max < 90; max++) {
        const cap = new HeadTailCapture(max);
        const bytes = new TextEncoder().encode(ch.repeat(500));
        for (let i = 0; i < bytes.length; i += 7) cap.push(bytes.subarray(i, i + 7));
        const text = cap.result().text;
        expect(text.includes("\uFFFD")).toBe(false);
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(max);
      }
    }
    const small = new HeadTailCapture(100);
    small.push(new TextEncoder().encode("ab"));
    small.push(new TextEncoder().encode("cd"));
    expect(small.result()).toEqual({ text: "abcd", truncated: false, omittedBytes: 0 });
  });

  it("tailLines returns the last lines", () => {
    expect(tailLines("a\nb\nc\n", 2)).toBe("b\nc\n");
    expect(tailLines("a\nb", 5)).toBe("a\nb");
    expect(tailLines("a\nb", 0)).toBe("");
  });
});
