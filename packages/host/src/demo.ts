import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunEvent } from "@capgate/loop";
import type { ModelClient } from "@capgate/models";

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
 * The offline demo any frontend can offer: a small broken project in a new temp directory
 * and the scripted model that fixes it through the real gate — search, load, read, patch,
 * a refused early finish, verify, finish. Run it with `harness.runGoal({ goal, model,
 * maxSteps, workspace })`; `fixed()` says whether math.js now adds.
 */
export async function createDemo(): Promise<{
  workspace: string;
  goal: string;
  model: ModelClient;
  maxSteps: number;
  fixed: () => boolean;
}> {
  const { createScriptedModel } = await import("@capgate/models");
  const workspace = mkdtempSync(join(tmpdir(), "capgate-demo-"));
  for (const [file, text] of Object.entries(PROJECT)) writeFileSync(join(workspace, file), text);
  return {
    workspace,
    goal: DEMO_GOAL,
    model: createScriptedModel(DEMO_REPLIES, { name: "demo" }),
    maxSteps: DEMO_REPLIES.length,
    fixed: () => readFileSync(join(workspace, "math.js"), "utf8").includes("return a + b;"),
  };
}

/** What `runDemo` gives back: the run, where its trace is, and one line saying how it went. */
export interface DemoOutcome {
  outcome: string;
  runId: string;
  tracePath: string;
  /** The temp workspace (removed unless `keep`). */
  workspace: string;
  fixed: boolean;
  /** "math.js now adds; the tests pass." — or what went wrong. */
  verdict: string;
}

/** Enough of a harness to run the demo on (a Harness, or an openHost's `harness`). */
export interface DemoHarness {
  runGoal: (options: {
    goal: string;
    model: ModelClient;
    maxSteps: number;
    signal?: AbortSignal;
    onEvent?: (event: RunEvent) => void;
  }) => Promise<{ outcome: string; runId: string; tracePath: string }>;
}

/**
 * Run the offline demo the way every frontend does (the capgate CLI's `demo`, the examples'
 * terminal app): a new broken project, `open` a harness on it, the scripted run with its
 * events to `onEvent`, then close, and remove the workspace unless `keep`.
 */
export async function runDemo(options: {
  open: (workspace: string) => Promise<{ harness: DemoHarness; close: () => Promise<void> }>;
  onEvent?: (event: RunEvent) => void;
  /** Told the workspace once the harness is open, before the run starts. */
  onStart?: (workspace: string) => void;
  signal?: AbortSignal;
  keep?: boolean;
}): Promise<DemoOutcome> {
  const demo = await createDemo();
  let opened: Awaited<ReturnType<typeof options.open>> | undefined;
  try {
    opened = await options.open(demo.workspace);
    options.onStart?.(demo.workspace);
    const result = await opened.harness.runGoal({
      goal: demo.goal,
      model: demo.model,
      maxSteps: demo.maxSteps,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    const fixed = demo.fixed();
    const verdict =
      fixed && result.outcome === "finished"
        ? "math.js now adds; the tests pass."
        : fixed
          ? "math.js was patched, but the run did not finish."
          : "math.js was not fixed.";
    const { outcome, runId, tracePath } = result;
    return { outcome, runId, tracePath, workspace: demo.workspace, fixed, verdict };
  } finally {
    await opened?.close();
    if (!options.keep) rmSync(demo.workspace, { recursive: true, force: true });
  }
}
