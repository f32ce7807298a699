// SPEC §14.6 — gateway: POST /tools/call requests/s on a trivial tool vs a bare route
// (GET /healthz) on the same Fastify instance, in the same run, with autocannon. The
// server runs in its own process (as it would in use), so the load generator does not
// share its thread.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import type { Figure } from "../figure.js";

export const name = "gateway";

// The server process: the trivial tool is validated, policy-checked and dispatched like
// any other and returns a few bytes, so the figure is the gateway's cost (Host check,
// auth, JSON body, executor) next to Fastify's floor.
const SERVER = `
import { startServer } from "@capgate/server";
import { defineCapability } from "@capgate/tools";
const noop = defineCapability({
  manifest: {
    name: "bench", version: "0.0.0", profileFit: [],
    description: "Benchmark capability: a tool that does nothing and returns a tiny result.",
    tools: [{ name: "bench.noop", description: "Return 'ok' at once.", risk: "read",
      inputSchema: { type: "object", additionalProperties: false, properties: {} } }],
  },
  handlers: { noop: async () => ({ success: true, summary: "ok" }) },
});
const server = await startServer({
  port: 0, workspace: process.env.BENCH_ROOT, stateDir: process.env.BENCH_ROOT + "/state",
  capabilities: [noop], token: process.env.BENCH_TOKEN,
});
process.stdout.write(server.url + "\\n");
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
`;

const CONNECTIONS = 10;
const SECONDS = 4;
const ROUNDS = 3;
const TOKEN = "bench-token-0123456789abcdef";
const benchDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

async function measure(options: autocannon.Options): Promise<number> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  const failures = result.non2xx + result.errors + result.timeouts;
  if (failures > 0)
    throw new Error(`${options.url}: ${failures} failed requests (non-2xx, errors or timeouts)`);
  return result.requests.average;
}

function startServerProcess(root: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", SERVER], {
    cwd: benchDir,
    env: { ...process.env, BENCH_ROOT: root, BENCH_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (out.includes("\n")) resolve({ child, url: out.split("\n")[0] as string });
    });
    child.once("exit", (code) => reject(new Error(`the server exited with ${code} before it was ready`)));
  });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function run(): Promise<Figure[]> {
  const root = mkdtempSync(join(tmpdir(), "capgate-bench-gateway-"));
  const { child, url } = await startServerProcess(root);
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const body = JSON.stringify({ tool: "bench.noop", arguments: {} });
  const call: autocannon.Options = { url: `${url}/tools/call`, method: "POST", headers, body };
  const bare: autocannon.Options = { url: `${url}/healthz` };
  const gateway: number[] = [];
  const bareRps: number[] = [];
  try {
    // Check the call works, warm both paths, then alternate so machine noise hits both alike.
    const probe = await fetch(call.url, { method: "POST", headers, body });
    if (probe.status !== 200) throw new Error(`/tools/call answered ${probe.status}: ${await probe.text()}`);
    await measure({ ...call, duration: 1 });
    await measure({ ...bare, duration: 1 });
    for (let i = 0; i < ROUNDS; i++) {
      bareRps.push(await measure(bare));
      gateway.push(await measure(call));
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(root, { recursive: true, force: true });
  }
  const rps = Math.round(mean(gateway));
  const bareMean = Math.round(mean(bareRps));
  return [
    { key: "gateway.rps", value: rps, target: `${(rps / bareMean).toFixed(2)}× the bare route` },
    { key: "gateway.bare_rps", value: bareMean },
  ];
}
