import { processesWith, uniqueSleep } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { runTimeout } from "./capability.js";
import { createShellTestHost } from "./test-support.js";

const host = createShellTestHost();

afterAll(() => host.close());

interface RunData {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
  timeoutMs: number;
}

describe("shell.run", () => {
  it("returns exit code, stdout and stderr, each labelled", async () => {
    const r = await host.call("shell.run", { command: "echo out; echo err >&2; exit 0" });
    expect(r.success).toBe(true);
    expect(r.summary).toBe(
      "$ echo out; echo err >&2; exit 0\nexit code 0.\n--- stdout ---\nout\n--- stderr ---\nerr",
    );
    expect(r.data).toMatchObject({ exitCode: 0, stdout: "out\n", stderr: "err\n", cwd: "." });
  });

  it("a non-zero exit is a failed result with the code and the error output", async () => {
    const r = await host.call("shell.run", { command: "echo broken >&2; exit 3" });
    expect(r.success).toBe(false);
    expect(r.summary).toContain("exit code 3.");
    expect(r.summary).toContain("--- stderr ---\nbroken");
    expect((r.data as RunData).exitCode).toBe(3);
  });

  it("says so when there is no output", async () => {
    const r = await host.call("shell.run", { command: "true" });
    expect(r.summary).toBe("$ true\nexit code 0.\n(no output)");
  });

  it("the environment is ctx.env, not the host's", async () => {
    process.env.CAPGATE_HOST_SECRET = "leak";
    try {
      const r = await host.call(
        "shell.run",
        { command: 'echo "[$ONLY_HERE][$CAPGATE_HOST_SECRET]"' },
        { env: { ...host.ctx.env, ONLY_HERE: "yes" } },
      );
      expect((r.data as RunData).stdout).toBe("[yes][]\n");
    } finally {
      delete process.env.CAPGATE_HOST_SECRET;
    }
  });

  it("stdin is closed, so a command waiting for input ends at once", async () => {
    const r = await host.call("shell.run", { command: 'read line; echo "got:$line:$?"', timeout_ms: 30_000 });
    expect(r.data).toMatchObject({ timedOut: false, stdout: "got::1\n" });
  });

  it("timeout_ms kills the whole process group and reports the output so far", async () => {
    // The child is found in the host's process table by a unique argument (its pid inside is
    // the sandbox's). The timeout is far above what starting the sandbox takes on a loaded
    // machine, so the output before it is always there.
    const m = uniqueSleep();
    const r = await host.call("shell.run", {
      command: `sleep ${m} & echo "child:$!"; sleep 30; echo finished`,
      timeout_ms: 5_000,
    });
    const data = r.data as RunData;
    expect(r.success).toBe(false);
    expect(r.summary).toContain("timed out after 5000 ms; its whole process group was killed.");
    expect(data.stdout).toMatch(/^child:\d+\n$/);
    expect(processesWith(m)).toEqual([]);
    expect(r.data).toMatchObject({ timedOut: true, timeoutMs: 5_000 });
  }, 30_000);

  it("the host's per-call limit caps timeout_ms (less a margin, so the result still carries the output)", async () => {
    const r = await host.call(
      "shell.run",
      { command: "echo partial; sleep 30", timeout_ms: 600_000 },
      { limits: { ...host.ctx.limits, timeoutMs: 10_000 } },
    );
    expect(r.data).toMatchObject({ timedOut: true, timeoutMs: runTimeout(600_000, 10_000) });
    expect(r.summary).toContain("partial");
  }, 30_000);

  it("computes the effective timeout from the call and the host limit", () => {
    expect(runTimeout(undefined, 600_000)).toBe(120_000);
    expect(runTimeout(5_000, 600_000)).toBe(5_000);
    expect(runTimeout(undefined, 120_000)).toBe(117_500);
    expect(runTimeout(600_000, 1_000)).toBe(800);
  });

  it("a 20 MB flood is captured head+tail within the output limit, with the marker", async () => {
    const limit = host.ctx.limits.outputBytes;
    const r = await host.call("shell.run", {
      command: "echo FIRST; head -c 20971520 /dev/zero | tr '\\0' a; echo; echo LAST",
    });
    const data = r.data as RunData;
    expect(r.success).toBe(true);
    expect(data.stdoutBytes).toBeGreaterThan(20_971_520);
    expect(data.truncated).toBe(true);
    expect(Buffer.byteLength(data.stdout)).toBeLessThanOrEqual(limit);
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(limit);
    expect(r.summary).toMatch(/^\$ echo FIRST/);
    expect(r.summary).toContain("FIRST");
    expect(r.summary).toMatch(/LAST$/);
    expect(r.summary).toMatch(/bytes truncated/);
    expect(r.summary).toMatch(/--- stdout, \d+ bytes, head and tail kept ---/);
    // The one marker counts what is really missing from the stream.
    const body = r.summary.slice(r.summary.indexOf("---\n", r.summary.indexOf("--- stdout")) + 4);
    const omitted = Number(/…\[(\d+) bytes truncated\]…/.exec(body)![1]);
    expect(body.match(/bytes truncated/g)).toHaveLength(1);
    const markerBytes = Buffer.byteLength(`\n…[${omitted} bytes truncated]…\n`);
    expect(omitted + Buffer.byteLength(body) - markerBytes + 1).toBe(data.stdoutBytes);
  }, 60_000);

  it("a flood on stdout does not crowd out a short stderr, and both floods fit together", async () => {
    const limit = host.ctx.limits.outputBytes;
    const one = await host.call("shell.run", {
      command: "head -c 5000000 /dev/zero | tr '\\0' o; echo 'the real error' >&2; exit 1",
    });
    expect(Buffer.byteLength(one.summary)).toBeLessThanOrEqual(limit);
    expect(one.summary).toContain("--- stderr ---\nthe real error");

    const both = await host.call("shell.run", {
      command:
        "head -c 5000000 /dev/zero | tr '\\0' o; echo OUT-END; head -c 5000000 /dev/zero | tr '\\0' e >&2; echo ERR-END >&2",
    });
    expect(Buffer.byteLength(both.summary)).toBeLessThanOrEqual(limit);
    expect(both.summary).toContain("OUT-END");
    expect(both.summary).toMatch(/ERR-END$/);
  }, 60_000);

  it("an abort of the run kills the command", async () => {
    const controller = new AbortController();
    const pending = host.call("shell.run", { command: "sleep 30" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const r = await pending;
    expect(r.success).toBe(false);
  }, 30_000);
});
