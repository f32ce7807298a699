// SPEC §14.4 — dispatch overhead: parse + validate + route + dispatch of a capability_call
// to a no-op tool, against calling the handler directly; ajv compiles per distinct schema.
import { Router } from "@capgate/router";
import { parseToolAction, validatorCacheStats } from "@capgate/schema";
import { CapabilitySet, createToolContext, defineCapability, executeTool } from "@capgate/tools";
import { withHostPath } from "@capgate/workspace";
import type { Figure } from "../figure.js";

export const name = "dispatch";

const manifest = {
  name: "noop",
  version: "1.0.0",
  description: "Does nothing, for measuring the gate.",
  profileFit: [],
  tools: [
    {
      name: "noop.run",
      description: "Return at once.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { x: { type: "integer" }, label: { type: "string" } },
        required: ["x"],
      },
    },
  ],
} as const;

const capability = defineCapability({
  manifest,
  handlers: { run: async (args) => ({ success: true, summary: String(args.x) }) },
});

const CALLS = 10_000;

export async function run(): Promise<Figure[]> {
  const router = new Router();
  router.load(capability.manifest);
  const ctx = {
    ...createToolContext({ workspace: process.cwd() }),
    capabilities: new CapabilitySet([capability]),
    loaded: router,
    // As the loop and the harness call: the PATH filter is part of every gated call.
    hostEnv: withHostPath,
  };
  const handler = capability.handlers.get("noop.run")!;
  const text = (i: number) =>
    `{"name":"capability_call","arguments":{"tool":"noop.run","arguments":{"x":${i},"label":"call"}}}`;

  const gated = async (i: number) => {
    const parsed = parseToolAction(text(i));
    if (!parsed.ok) throw new Error(parsed.error.message);
    const args = parsed.action.arguments as { tool: string; arguments: Record<string, unknown> };
    return executeTool(args.tool, args.arguments, ctx);
  };
  const direct = async (i: number) => handler({ x: i, label: "call" }, ctx);

  // Warm up both paths (and compile the schemas once).
  for (let i = 0; i < 2_000; i++) {
    await gated(i);
    await direct(i);
  }
  const compilesBefore = validatorCacheStats().compiles;
  const rounds = 5;
  const gatedTimes: number[] = [];
  const directTimes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    for (let i = 0; i < CALLS; i++) await gated(i);
    gatedTimes.push((performance.now() - t) / CALLS);
    t = performance.now();
    for (let i = 0; i < CALLS; i++) await direct(i);
    directTimes.push((performance.now() - t) / CALLS);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const g = median(gatedTimes);
  const d = median(directTimes);
  // Distinct schemas seen: the action envelope's capability_call schema and noop.run's.
  const newCompiles = validatorCacheStats().compiles - compilesBefore;
  return [
    {
      key: "dispatch.overhead_us",
      value: round((g - d) * 1000, 2),
      target: "µs per call over a direct handler call",
    },
    { key: "dispatch.ratio", value: round(g / d, 1), target: "gated ÷ direct" },
    {
      key: "dispatch.compiles",
      value: 1 + newCompiles / 2,
      target: "= 1 per distinct schema over 10,000 calls",
    },
  ];
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
