// Code mode (issue 21): how long a script's isolate takes to start, what one nested call
// costs over a direct executeTool, and how many characters reach the model's context when a
// task of N tool calls is done call by call versus in one script.run.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness, type Harness } from "@capgate/harness";
import type { RunEvent } from "@capgate/loop";
import { createScriptedModel } from "@capgate/models";
import { CapabilitySet, createToolContext, defineCapability, executeTool } from "@capgate/tools";
import type { Figure } from "../figure.js";

export const name = "script";

const noop = defineCapability({
  manifest: {
    name: "noop",
    version: "1.0.0",
    description: "Does nothing, for measuring nested calls.",
    profileFit: ["Orchestrator"],
    tools: [
      {
        name: "noop.run",
        description: "Return at once.",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { x: { type: "integer" } },
          required: ["x"],
        },
      },
    ],
  } as const,
  handlers: { run: async (args) => ({ success: true, summary: String(args.x) }) },
});

const NESTED_CALLS = 1_000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function run(): Promise<Figure[]> {
  const root = mkdtempSync(join(tmpdir(), "bench-script-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const harness = await createHarness({
    workspace,
    stateDir: join(root, "state"),
    capabilities: [noop],
    config: {
      shell: { sandbox: "off" },
      // One profile whose context budget holds a whole 100-call task, so nothing is trimmed away.
      profiles: { Bench: { promptDelta: "Do the task.", charBudget: 5_000_000, preload: ["fs"] } },
    },
  });
  try {
    return [...(await isolateFigures(harness)), ...(await contextEconomy(harness, workspace))];
  } finally {
    await harness.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Start time of a script (pooled instance and a new one) and the cost of one nested call. */
async function isolateFigures(harness: Harness): Promise<Figure[]> {
  const script = (source: string) => harness.callTool("script.run", { source, timeout_ms: 120_000 });
  await script("return 1"); // compiles the engine once per process
  const starts: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    await script("return 1");
    starts.push(performance.now() - t);
  }

  // Direct executeTool of the same no-op tool, the baseline.
  const ctx = {
    ...createToolContext({ workspace: harness.workspace }),
    capabilities: new CapabilitySet([noop]),
    loaded: { isToolLoaded: () => true },
  };
  for (let i = 0; i < 2_000; i++) await executeTool("noop.run", { x: i }, ctx);
  const direct: number[] = [];
  const nested: number[] = [];
  const loop = `for (let i = 0; i < ${NESTED_CALLS}; i++) await tools.noop.run({ x: i }); return 1;`;
  await script(loop); // warms the nested path as the executeTool loop above warmed the direct one
  for (let round_ = 0; round_ < 5; round_++) {
    let t = performance.now();
    for (let i = 0; i < NESTED_CALLS; i++) await executeTool("noop.run", { x: i }, ctx);
    direct.push(((performance.now() - t) * 1000) / NESTED_CALLS);
    t = performance.now();
    await script("return 1");
    const empty = performance.now() - t;
    t = performance.now();
    await script(loop);
    nested.push(((performance.now() - t - empty) * 1000) / NESTED_CALLS);
  }
  const d = median(direct);
  const n = median(nested);
  return [
    {
      key: "script.start_ms",
      value: round(median(starts), 2),
      target: "ms for script.run of `return 1` (pooled isolate)",
    },
    { key: "script.direct_call_us", value: round(d, 1), target: "µs per direct executeTool of a no-op tool" },
    { key: "script.nested_call_us", value: round(n, 1), target: "µs per nested call of the same tool" },
    {
      key: "script.nested_overhead_us",
      value: round(n - d, 1),
      target: "≤ 200 µs over a direct executeTool",
    },
    { key: "script.nested_ratio", value: round(n / d, 1), target: "≤ 2 (nested ÷ direct)" },
  ];
}

/**
 * The same task both ways, played by a scripted model: read N files and count the lines
 * that mention TODO. Call by call, every file's text comes back to the model; as a script,
 * only the count does. Measured: the characters of the model's last request (everything
 * that entered its context) and of all requests together (what a provider bills as input).
 */
async function contextEconomy(harness: Harness, workspace: string): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const n of [5, 20, 100]) {
    const dir = `task${n}`;
    mkdirSync(join(workspace, dir), { recursive: true });
    const paths: string[] = [];
    for (let i = 0; i < n; i++) {
      const path = `${dir}/module${i}.ts`;
      paths.push(path);
      writeFileSync(join(workspace, path), sourceFile(i));
    }
    const act = (name_: string, args: Record<string, unknown>) =>
      JSON.stringify({ name: name_, arguments: args });
    const end = [
      act("verify", { claim: "files exist", command: `test -d ${dir}` }),
      act("finish", { summary: "counted" }),
    ];
    const byCall = await context(harness, [
      ...paths.map((path) => act("capability_call", { tool: "fs.read", arguments: { path } })),
      ...end,
    ]);
    const source = `let todo = 0;
for (const path of ${JSON.stringify(paths)}) {
  const page = await tools.fs.read({ path });
  todo += page.data.content.split("\\n").filter((line) => line.includes("TODO")).length;
}
return { files: ${n}, todo };`;
    const scripted = await context(harness, [
      act("capability_load", { name: "script" }),
      act("capability_call", { tool: "script.run", arguments: { source } }),
      ...end,
    ]);
    figures.push(
      {
        key: `script.context.calls_${n}`,
        value: byCall.last,
        target: `chars in context after ${n} calls, call by call`,
      },
      {
        key: `script.context.script_${n}`,
        value: scripted.last,
        target: `chars in context after the same ${n} calls in one script`,
      },
      {
        key: `script.context.ratio_${n}`,
        value: round(scripted.last / byCall.last, 3),
        target: n === 20 ? "≤ 0.25 (script ÷ call by call)" : "script ÷ call by call",
      },
      {
        key: `script.context.input_ratio_${n}`,
        value: round(scripted.total / byCall.total, 3),
        target: "all requests' chars, script ÷ call by call",
      },
    );
  }
  return figures;
}

async function context(harness: Harness, replies: string[]): Promise<{ last: number; total: number }> {
  const requests: number[] = [];
  const result = await harness.runGoal({
    goal: "Count the lines that mention TODO in the task's files.",
    profile: "Bench",
    maxSteps: replies.length + 1,
    model: createScriptedModel(replies),
    onEvent: (e: RunEvent) => {
      if (e.type === "model_request") requests.push(e.totalChars);
    },
  });
  if (result.outcome !== "finished")
    throw new Error(`bench task ended ${result.outcome}: ${result.error ?? ""}`);
  // What the model read after its last action, too: the request after it is the final one.
  return { last: requests.at(-1) ?? 0, total: requests.reduce((a, b) => a + b, 0) };
}

/** A small, ordinary source file (~600 characters), a few lines of which mention TODO. */
function sourceFile(i: number): string {
  return [
    `// module ${i}: helpers for the order pipeline`,
    `import { fetchOrder } from "./orders.js";`,
    "",
    `export async function load${i}(id: string) {`,
    "  const order = await fetchOrder(id);",
    i % 3 === 0 ? "  // TODO: retry when the order service times out" : "  // the service retries on its own",
    `  if (!order) throw new Error("no order " + id);`,
    "  return { ...order, loadedAt: Date.now() };",
    "}",
    "",
    `export function total${i}(items: Array<{ price: number; qty: number }>) {`,
    i % 2 === 0 ? "  // TODO: currency rounding" : "  // rounding happens at checkout",
    "  return items.reduce((sum, item) => sum + item.price * item.qty, 0);",
    "}",
    "",
  ].join("\n");
}
