// SPEC §14.6 — gateway: POST /tools/call requests/s on a trivial tool vs a bare route
// (GET /healthz) on the same Fastify instance, in the same run, with autocannon.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "@capgate/server";
import { defineCapability } from "@capgate/tools";
import autocannon from "autocannon";
import type { Figure } from "../figure.js";

export const name = "gateway";

// The trivial tool: validated, policy-checked and dispatched like any other, returning a
// few bytes, so the figure is the gateway's cost (auth, Host check, JSON body, executor).
const noop = defineCapability({
  manifest: {
    name: "bench",
    version: "0.0.0",
    description: "Benchmark capability: a tool that does nothing and returns a tiny result.",
    profileFit: [],
    tools: [
      {
        name: "bench.noop",
        description: "Return 'ok' at once.",
        risk: "read",
        inputSchema: { type: "object", additionalProperties: false, properties: {} },
      },
    ],
  } as const,
  handlers: { noop: async () => ({ success: true, summary: "ok" }) },
});

const CONNECTIONS = 10;
const SECONDS = 4;
const ROUNDS = 3;

async function measure(options: autocannon.Options): Promise<number> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  const failures = result.non2xx + result.errors + result.timeouts;
  if (failures > 0)
    throw new Error(`${options.url}: ${failures} failed requests (non-2xx, errors or timeouts)`);
  return result.requests.average;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function run(): Promise<Figure[]> {
  const root = mkdtempSync(join(tmpdir(), "capgate-bench-gateway-"));
  const server = await startServer({
    port: 0,
    workspace: root,
    stateDir: join(root, "state"),
    capabilities: [noop],
    token: "bench-token-0123456789abcdef",
  });
  const call: autocannon.Options = {
    url: `${server.url}/tools/call`,
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify({ tool: "bench.noop", arguments: {} }),
  };
  const bare: autocannon.Options = { url: `${server.url}/healthz` };
  const gateway: number[] = [];
  const bareRps: number[] = [];
  try {
    // Check the call works, warm both paths, then alternate so machine noise hits both alike.
    const probe = await fetch(call.url, { method: "POST", headers: call.headers, body: call.body as string });
    if (probe.status !== 200) throw new Error(`/tools/call answered ${probe.status}: ${await probe.text()}`);
    await measure({ ...call, duration: 1 });
    await measure({ ...bare, duration: 1 });
    for (let i = 0; i < ROUNDS; i++) {
      bareRps.push(await measure(bare));
      gateway.push(await measure(call));
    }
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
  const rps = Math.round(mean(gateway));
  const bareMean = Math.round(mean(bareRps));
  return [
    { key: "gateway.rps", value: rps, target: `${(rps / bareMean).toFixed(2)}× the bare route` },
    { key: "gateway.bare_rps", value: bareMean },
  ];
}
