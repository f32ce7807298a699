import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { needs, processesWith, shellForTests, uniqueSleep } from "@capgate/test-system-parts";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolLimits,
  type ToolResult,
} from "@capgate/tools";
import { afterAll, describe, expect, it } from "vitest";
import { capability } from "./capability.js";
import { recut, splitBudget } from "./output.js";
import { effectiveTimeout } from "./run.js";

const ws = realpathSync(mkdtempSync(join(tmpdir(), "capgate-code-")));
const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "capgate-code-state-")));
afterAll(() => {
  for (const dir of [ws, stateDir]) rmSync(dir, { recursive: true, force: true });
});

// Python tests may skip only where CI does not require system binaries.
const python = needs(["python3"]);
const itPython = (name: string, body: () => Promise<void>, timeout?: number) =>
  it.skipIf(python.skip)(name + python.note, body, timeout);

function context(
  options: {
    limits?: Partial<ToolLimits>;
    env?: Record<string, string | undefined>;
    signal?: AbortSignal;
  } = {},
): ExecuteContext {
  return {
    workspace: ws,
    signal: options.signal ?? new AbortController().signal,
    env: options.env ?? { PATH: process.env.PATH, HOME: process.env.HOME, LANG: "C.UTF-8" },
    profile: { name: "Coder", maySpawnWorkers: false },
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    // The sandbox on where bubblewrap works (or is required); off on a machine without it.
    policy: { shell: shellForTests() },
    services: {},
    resources: createHostResources(),
    stateDir,
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

const run = (args: Record<string, unknown>, ctx = context()): Promise<ToolResult> =>
  executeTool("code.run", args, ctx);

interface RunData {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  timedOut: boolean;
  aborted: boolean;
  timeoutMs: number;
  truncated: boolean;
}
const data = (r: ToolResult) => r.data as RunData;

async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 400 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 25));
  return readFileSync(path, "utf8");
}

// A JavaScript program that starts a child (a `sleep` with a unique argument, found in the
// host's process table whatever pid namespace it is in), writes the marker, then waits forever.
const spawnAndHang = (pidFile: string, marker: string) => `
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
spawn("sleep", [${JSON.stringify(marker)}], { stdio: "ignore" });
writeFileSync(${JSON.stringify(pidFile)}, ${JSON.stringify(marker)});
console.log("started");
setInterval(() => {}, 1000);
`;

/** No process of the program survived: nothing in the process table carries its marker (polled, bounded). */
async function expectNoSurvivor(marker: string): Promise<void> {
  for (let i = 0; i < 750 && processesWith(marker).length > 0; i++)
    await new Promise((done) => setTimeout(done, 20));
  expect(processesWith(marker)).toEqual([]);
}

// A timeout far above what starting the program and its child takes on a loaded machine, so
// the timeout, not the machine's speed, decides what the test sees.
const TIMEOUT_MS = 8_000;

describe("code.run — javascript", () => {
  it("runs with the host's Node.js and reports exit code and stdout", async () => {
    const r = await run({ language: "javascript", source: "console.log(1 + 1)" });
    expect(r.success).toBe(true);
    expect(r.summary).toBe("javascript program exited with code 0.\n--- stdout (2 bytes) ---\n2");
    expect(data(r)).toMatchObject({ exitCode: 0, stdout: "2\n", stderr: "" });
  });

  it("runs as an ES module in the workspace: top-level await, node: imports, relative imports", async () => {
    writeFileSync(join(ws, "lib.mjs"), "export const answer = 42;\n");
    const r = await run({
      language: "javascript",
      source:
        'import { answer } from "./lib.mjs";\nimport { basename } from "node:path";\nawait new Promise((r) => setTimeout(r, 10));\nconsole.log(answer, process.cwd() === ' +
        `${JSON.stringify(ws)}, basename("/a/b.txt"))`,
    });
    expect(data(r).stdout).toBe("42 true b.txt\n");
  });

  it("passes exactly ctx.env", async () => {
    process.env.CAPGATE_CODE_SECRET = "s3cret";
    try {
      const r = await run(
        { language: "javascript", source: "console.log(JSON.stringify(process.env))" },
        context({ env: { PATH: process.env.PATH, ONLY: "this" } }),
      );
      const env = JSON.parse(data(r).stdout) as Record<string, string>;
      expect(env.ONLY).toBe("this");
      expect(env.CAPGATE_CODE_SECRET).toBeUndefined();
    } finally {
      delete process.env.CAPGATE_CODE_SECRET;
    }
  });

  it("fails on a non-zero exit and shows stderr", async () => {
    const r = await run({
      language: "javascript",
      source: 'console.log("before");\nthrow new Error("boom");',
    });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(
      /^javascript program exited with code 1\.\n--- stdout \(7 bytes\) ---\nbefore\n--- stderr/,
    );
    expect(r.summary).toContain("Error: boom");
    const exit = await run({ language: "javascript", source: "process.exit(3)" });
    expect(data(exit).exitCode).toBe(3);
    expect(exit.summary).toBe("javascript program exited with code 3.\n--- stdout: (empty) ---");
  });

  it("kills the program and the processes it started on timeout, keeping earlier output", async () => {
    const pidFile = join(ws, "timeout.pid");
    const m = uniqueSleep();
    const r = await run({ language: "javascript", source: spawnAndHang(pidFile, m), timeout_ms: TIMEOUT_MS });
    expect(r.success).toBe(false);
    expect(data(r).timedOut).toBe(true);
    expect(r.summary).toMatch(
      new RegExp(`^javascript program timed out after ${TIMEOUT_MS} ms and was killed, with any processes`),
    );
    expect(data(r).stdout).toBe("started\n");
    expect(readFileSync(pidFile, "utf8")).toBe(m);
    await expectNoSurvivor(m);
  }, 30_000);

  it("lowers timeout_ms to fit under the host's per-call limit and says so", async () => {
    expect(effectiveTimeout(undefined, 120_000)).toBe(30_000);
    expect(effectiveTimeout(600_000, 120_000)).toBe(118_000);
    const r = await run(
      { language: "javascript", source: "setInterval(() => {}, 1000)", timeout_ms: 600_000 },
      context({ limits: { timeoutMs: 3000 } }),
    );
    expect(data(r).timeoutMs).toBe(1000);
    expect(r.summary).toMatch(/timed out after 1000 ms .*timeout_ms 600000 was lowered to the host's limit/);
  }, 30_000);

  it("caps a 20 MB flood, keeping head and tail within the output limit", async () => {
    const r = await run({
      language: "javascript",
      source:
        'process.stdout.write("HEAD\\n" + "x".repeat(20 * 1024 * 1024) + "\\nTAIL\\n");\nconsole.error("err at the end");',
    });
    expect(r.success).toBe(true);
    expect(data(r).stdoutBytes).toBe(20 * 1024 * 1024 + 11);
    expect(data(r).truncated).toBe(true);
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(DEFAULT_LIMITS.outputBytes);
    expect(r.summary).toMatch(
      /--- stdout \(20971531 bytes\) ---\nHEAD\nx+\n…\[\d+ bytes truncated\]…\nx+\nTAIL/,
    );
    expect(r.summary).toContain("--- stderr (15 bytes) ---\nerr at the end");
    // The marker counts every byte of the stream that is not shown.
    const section = r.summary.slice(r.summary.indexOf("HEAD"), r.summary.indexOf("\n--- stderr"));
    const omitted = Number(/\[(\d+) bytes truncated\]/.exec(section)?.[1]);
    const shown = Buffer.byteLength(section.replace(/\n…\[\d+ bytes truncated\]…\n/, ""));
    expect(omitted + shown).toBe(20 * 1024 * 1024 + 10); // the final newline is not shown
  }, 60_000);

  it("stops the program and its children when the run is aborted", async () => {
    const pidFile = join(ws, "abort.pid");
    const m = uniqueSleep();
    const controller = new AbortController();
    const pending = run(
      { language: "javascript", source: spawnAndHang(pidFile, m) },
      context({ signal: controller.signal }),
    );
    await waitForFile(pidFile);
    expect(processesWith(m)).toHaveLength(1);
    controller.abort();
    const r = await pending;
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/aborted/);
    // The executor answers at once; the sandbox is being stopped.
    await expectNoSurvivor(m);
  }, 30_000);
});

describe("code.run — python", () => {
  itPython("runs python3 in the workspace and reports stdout", async () => {
    mkdirSync(join(ws, "pkg"), { recursive: true });
    writeFileSync(join(ws, "helper.py"), "VALUE = 7\n");
    const r = await run({
      language: "python",
      source: `import os, helper\nprint(2 ** 10, helper.VALUE, os.getcwd() == ${JSON.stringify(ws)})`,
    });
    expect(r.success).toBe(true);
    expect(data(r).stdout).toBe("1024 7 True\n");
    expect(existsSync(join(ws, "__pycache__"))).toBe(false);
  });

  itPython("fails on a non-zero exit with the traceback on stderr", async () => {
    const r = await run({ language: "python", source: "import sys\nprint('partial')\nsys.exit(4)" });
    expect(r.success).toBe(false);
    expect(data(r)).toMatchObject({ exitCode: 4, stdout: "partial\n" });
    const e = await run({ language: "python", source: "raise ValueError('bad value')" });
    expect(data(e).exitCode).toBe(1);
    expect(e.summary).toMatch(/--- stderr \(\d+ bytes\) ---\nTraceback[\s\S]*ValueError: bad value/);
  });

  itPython(
    "kills python and the subprocess it started on timeout, keeping unbuffered output",
    async () => {
      const m = uniqueSleep();
      const source = `import subprocess, time\nsubprocess.Popen(["sleep", "${m}"])\nprint("started")\ntime.sleep(300)`;
      const r = await run({ language: "python", source, timeout_ms: TIMEOUT_MS });
      expect(data(r)).toMatchObject({ timedOut: true, stdout: "started\n" });
      await expectNoSurvivor(m);
    },
    30_000,
  );

  it("fails clearly when python3 is not on PATH", async () => {
    // Outside the workspace: a PATH entry inside it is never used for host lookups (host-path.ts).
    const emptyBin = mkdtempSync(join(tmpdir(), "capgate-empty-bin-"));
    const r = await run({ language: "python", source: "print(1)" }, context({ env: { PATH: emptyBin } }));
    expect(r.success).toBe(false);
    expect(r.summary).toBe(
      `python3 is not available: it was not found on PATH (${emptyBin}). Install Python 3 or use language "javascript".`,
    );
  });
});

describe("code.run — arguments and output budget", () => {
  it("names the bad property", async () => {
    for (const [args, property] of [
      [{ language: "ruby", source: "puts 1" }, "language"],
      [{ language: "python", code: "print(1)" }, "code"],
      [{ language: "python", source: "" }, "source"],
      [{ language: "python", source: "x", timeout_ms: 50 }, "timeout_ms"],
    ] as const) {
      const error = await run(args).catch((e: unknown) => e);
      expect(CapgateError.isInstance(error) && error.code).toBe("invalid_arguments");
      expect((error as CapgateError).property).toBe(property);
    }
  });

  it("splits the budget between stdout and stderr, giving unused room to the other", () => {
    const whole = (text: string) => ({ text, totalBytes: Buffer.byteLength(text) });
    expect(splitBudget(whole("a".repeat(10)), whole("b".repeat(10)), 100)).toEqual([
      "a".repeat(10),
      "b".repeat(10),
    ]);
    const [out, err] = splitBudget(whole("a".repeat(1000)), whole("short"), 200);
    expect(err).toBe("short");
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(195);
    const omitted = Number(/\[(\d+) bytes truncated\]/.exec(out)?.[1]);
    expect(omitted + out.replace(/\n…\[\d+ bytes truncated\]…\n/, "").length).toBe(1000);
    const [o2, e2] = splitBudget(whole("a".repeat(1000)), whole("b".repeat(1000)), 200);
    expect(Buffer.byteLength(o2) + Buffer.byteLength(e2)).toBeLessThanOrEqual(200);
    expect(e2).toContain("bytes truncated");
  });

  it("re-cuts an already cut capture so the marker counts every missing byte", () => {
    // As runProcess returns a 10 000-byte stream captured in 1 000 bytes.
    const captured = `${"h".repeat(480)}\n…[9040 bytes truncated]…\n${"t".repeat(480)}`;
    const cut = recut(captured, 10_000, 300);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(300);
    const kept = cut.replace(/\n…\[\d+ bytes truncated\]…\n/, "");
    expect(cut).toContain(`[${10_000 - Buffer.byteLength(kept)} bytes truncated]`);
    expect(cut.startsWith("h")).toBe(true);
    expect(cut.endsWith("t")).toBe(true);
    expect(recut("é".repeat(100), 200, 60)).toMatch(/^é+\n…\[\d+ bytes truncated\]…\né+$/);
  });
});
