import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { RunEvent } from "@capgate/loop";
import { createScriptedModel } from "@capgate/models";
import { type GlobalOptions, openHarness } from "../context.js";
import { type CliIO, outputClosed, paint } from "../io.js";
import { printJsonLine } from "../json.js";
import { exitCodeForOutcome, renderEvent } from "../render.js";

/** Whether `capgate` is a command on PATH (the closing hint tells how to get it there when not). */
function capgateOnPath(): boolean {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, "capgate"), constants.X_OK);
      return true;
    } catch {
      // not in this one
    }
  }
  return false;
}

/** The broken project the demo fixes: add() subtracts. */
const PROJECT: Record<string, string> = {
  "package.json": `${JSON.stringify({ name: "demo-calc", private: true, scripts: { test: "node test.js" } }, null, 2)}\n`,
  "math.js":
    "// Small maths helpers.\nfunction add(a, b) {\n  return a - b;\n}\n\nfunction double(n) {\n  return add(n, n);\n}\n\nmodule.exports = { add, double };\n",
  "test.js":
    'const assert = require("node:assert");\nconst { add, double } = require("./math.js");\n\nassert.strictEqual(add(2, 3), 5, "add(2, 3)");\nassert.strictEqual(double(4), 8, "double(4)");\nconsole.log("all tests passed");\n',
};

export const DEMO_GOAL = "Fix the bug in math.js so that `node test.js` passes.";

const action = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

/** What the bundled scripted model answers, in order: the path a good model takes. */
export const DEMO_REPLIES: readonly string[] = [
  action("capability_search", { query: "read and patch files" }),
  action("capability_load", { name: "fs" }),
  action("capability_call", { tool: "fs.read", arguments: { path: "math.js" } }),
  action("goal_update", {
    status: "working",
    plan: ["fix add() in math.js", "run node test.js"],
    note: "add() returns a - b",
  }),
  action("capability_call", {
    tool: "fs.patch",
    arguments: { path: "math.js", old: "return a - b;", new: "return a + b;" },
  }),
  action("finish", { summary: "Fixed add() in math.js." }),
  action("verify", { claim: "the test suite passes", command: "node test.js" }),
  action("finish", {
    summary: "Fixed add() in math.js: it subtracted instead of adding, which also broke double().",
    evidence: "verify: `node test.js` exited 0 and printed 'all tests passed'",
  }),
];

/**
 * `capgate demo`: offline, a bundled scripted model fixes a small broken project in a
 * temp workspace through the real gate — search, load, read, patch, a refused early
 * finish, verify, finish — and prints where the trace is.
 */
export async function demoCommand(
  options: { json?: boolean; keep?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const p = paint(io);
  const workspace = mkdtempSync(join(tmpdir(), "capgate-demo-"));
  for (const [file, text] of Object.entries(PROJECT)) writeFileSync(join(workspace, file), text);
  // Stop (and clean up the temp workspace) when our reader goes away: `capgate demo | head`.
  const stop = new AbortController();
  const onClosed = () => stop.abort(new Error("the output pipe was closed"));
  io.closed?.addEventListener("abort", onClosed, { once: true });
  let harness: Awaited<ReturnType<typeof openHarness>> | undefined;
  try {
    harness = await openHarness(
      global,
      {
        workspace,
        approval: "never",
        // The demo's commands are its own bundled script, not a model's: without bubblewrap
        // (a fresh machine with only Node and npm) they run unsandboxed, said so up front.
        unsandboxedIfUnavailable: () =>
          io.err(
            p.yellow(
              "note: bubblewrap is not installed, so the demo's own scripted commands run without the OS sandbox; real runs refuse commands until it is (apt-get install bubblewrap).",
            ),
          ),
      },
      { io },
    );
    if (!options.json) {
      io.out(
        p.bold("capgate demo") +
          p.dim(" — a scripted model fixes a broken project through the gate (offline)"),
      );
      io.out(p.dim(`workspace: ${workspace}`));
    }
    const result = await harness.runGoal({
      goal: DEMO_GOAL,
      model: createScriptedModel(DEMO_REPLIES, { name: "demo" }),
      maxSteps: DEMO_REPLIES.length,
      signal: stop.signal,
      onEvent: (e: RunEvent) => {
        if (options.json) return printJsonLine(io, e);
        const line = renderEvent(e, p);
        if (line) io.out(line);
      },
    });
    if (outputClosed(io)) return 0;
    if (!options.json) {
      const fixed = readFileSync(join(workspace, "math.js"), "utf8").includes("return a + b;");
      io.out("");
      io.out(`${p.bold("trace:")} ${result.tracePath}`);
      io.out(p.dim(`replay it with: capgate trace ${result.runId}`));
      if (!capgateOnPath())
        io.out(
          p.dim(
            `(capgate is not on your PATH: from a checkout run \`pnpm link:cli\`, or meanwhile: node ${process.argv[1] ?? "apps/cli/dist/bin.js"} trace ${result.runId})`,
          ),
        );
      io.out(
        p.dim(
          fixed && result.outcome === "finished"
            ? "math.js now adds; the tests pass."
            : fixed
              ? "math.js was patched, but the run did not finish."
              : "math.js was not fixed.",
        ),
      );
    }
    return exitCodeForOutcome(result.outcome);
  } finally {
    io.closed?.removeEventListener("abort", onClosed);
    await harness?.close();
    if (!options.keep) rmSync(workspace, { recursive: true, force: true });
  }
}
