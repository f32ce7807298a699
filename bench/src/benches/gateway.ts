// SPEC §14.6 — gateway: POST /tools/call requests/s on a trivial tool vs a bare route
// (GET /healthz) on the same Fastify instance, in the same run, with autocannon. The
// server runs in its own process (as it would in use), so the load generator does not
// share its thread. A second server exports every call's span over OTLP/HTTP to a sink on
// 127.0.0.1 (issue 23's overhead figure), measured in the same rounds.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import type { Figure } from "../figure.js";
import { median } from "../lib/random.js";

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
// Short rounds, many of them, medians: this machine's neighbours come and go within seconds,
// and a median of interleaved rounds keeps one slow stretch from deciding a ratio.
const SECONDS = 2;
const ROUNDS = 7;
const WARM_SECONDS = 5;
const TOKEN = "bench-token-0123456789abcdef";
const benchDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * CPU time (user + system) the server's main thread has used, in µs, from
 * /proc/<pid>/task/<pid>/stat; undefined where there is no /proc. Per request it is a
 * steadier figure than req/s on a shared machine: other processes' load slows the
 * server down but does not add to its own CPU time.
 */
function mainThreadCpuUs(pid: number | undefined): number | undefined {
  const path = `/proc/${pid}/task/${pid}/stat`;
  if (pid === undefined || !existsSync(path)) return undefined;
  const fields = readFileSync(path, "utf8").split(") ")[1]?.split(" ") ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  // Clock ticks are 100 per second on Linux (USER_HZ).
  return Number.isFinite(ticks) ? ticks * 10_000 : undefined;
}

async function measure(
  options: autocannon.Options,
  pid?: number,
): Promise<{ rps: number; cpuUs: number | undefined }> {
  const before = mainThreadCpuUs(pid);
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  const after = mainThreadCpuUs(pid);
  const failures = result.non2xx + result.errors + result.timeouts;
  if (failures > 0)
    throw new Error(`${options.url}: ${failures} failed requests (non-2xx, errors or timeouts)`);
  const cpuUs =
    before !== undefined && after !== undefined && result.requests.total > 0
      ? (after - before) / result.requests.total
      : undefined;
  return { rps: result.requests.average, cpuUs };
}

/** The environment without OpenTelemetry variables, so "off" is off whatever the shell set. */
function envWithoutOtel(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("OTEL_")));
}

// An OTLP/HTTP sink on 127.0.0.1, in its own process as a collector would be: it reads each
// export request whole and answers 200, without decoding. In the bench's own process it
// would take its CPU from the load generator and lower the traced figure for a reason that
// has nothing to do with the server.
const SINK = `
import { createServer } from "node:http";
let requests = 0;
const sink = createServer((req, res) => {
  req.resume();
  req.once("end", () => {
    requests++;
    res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  });
});
sink.listen(0, "127.0.0.1", () => process.stdout.write("http://127.0.0.1:" + sink.address().port + "\\n"));
process.on("SIGTERM", () => { process.stdout.write(requests + "\\n"); sink.close(); sink.closeAllConnections(); });
`;

/**
 * A module run as its own Node process; resolves once it has printed its first line
 * (its address). `output()` is everything it printed, for a last word at exit.
 */
function startModule(
  code: string,
  what: string,
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ child: ChildProcess; firstLine: string; output(): string }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
    ...options,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (out.includes("\n")) resolve({ child, firstLine: out.split("\n")[0] as string, output: () => out });
    });
    child.once("exit", (code) => reject(new Error(`${what} exited with ${code} before it was ready`)));
  });
}

async function startOtlpSink(): Promise<{ endpoint: string; close(): Promise<number> }> {
  const sink = await startModule(SINK, "the OTLP sink");
  return {
    endpoint: sink.firstLine,
    /** Stop the sink; resolves to the number of export requests it answered. */
    async close() {
      const exited = once(sink.child, "exit");
      sink.child.kill("SIGTERM");
      await exited;
      return Number(sink.output().split("\n")[1]);
    },
  };
}

async function startServerProcess(
  root: string,
  env: NodeJS.ProcessEnv = envWithoutOtel(),
): Promise<{ child: ChildProcess; url: string }> {
  const server = await startModule(SERVER, "the server", {
    cwd: benchDir,
    env: { ...env, BENCH_ROOT: root, BENCH_TOKEN: TOKEN },
  });
  return { child: server.child, url: server.firstLine };
}

const round1 = (x: number) => Math.round(x * 10) / 10;

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

export async function run(): Promise<Figure[]> {
  const root = mkdtempSync(join(tmpdir(), "capgate-bench-gateway-"));
  const tracedRoot = mkdtempSync(join(tmpdir(), "capgate-bench-gateway-otel-"));
  const twinRoot = mkdtempSync(join(tmpdir(), "capgate-bench-gateway-twin-"));
  const sink = await startOtlpSink();
  let plain: { child: ChildProcess; url: string } | undefined;
  let traced: { child: ChildProcess; url: string } | undefined;
  // A second server exactly like the first (export off): how far apart two identical
  // servers measure in this run is the noise the traced figure is read against.
  let twin: { child: ChildProcess; url: string } | undefined;
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const body = JSON.stringify({ tool: "bench.noop", arguments: {} });
  const gateway: number[] = [];
  const bareRps: number[] = [];
  const gatewayCpu: number[] = [];
  const bareCpu: number[] = [];
  const tracedRps: number[] = [];
  const tracedCpu: number[] = [];
  const twinRps: number[] = [];
  const twinCpu: number[] = [];
  let exports = 0;
  try {
    plain = await startServerProcess(root);
    traced = await startServerProcess(tracedRoot, {
      ...envWithoutOtel(),
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
    });
    const call: autocannon.Options = { url: `${plain.url}/tools/call`, method: "POST", headers, body };
    twin = await startServerProcess(twinRoot);
    const tracedCall: autocannon.Options = { ...call, url: `${traced.url}/tools/call` };
    const twinCall: autocannon.Options = { ...call, url: `${twin.url}/tools/call` };
    const bare: autocannon.Options = { url: `${plain.url}/healthz` };
    // Check the calls work, warm every path, then alternate so machine noise hits all alike.
    // Warm-up is long on purpose: two identical servers measured after 1 s of load differed
    // by up to 25 % (each process's JIT settles differently); after 5 s, within 5 %.
    for (const target of [call, tracedCall, twinCall]) {
      const probe = await fetch(target.url, { method: "POST", headers, body });
      if (probe.status !== 200)
        throw new Error(`/tools/call answered ${probe.status}: ${await probe.text()}`);
      await measure({ ...target, duration: WARM_SECONDS });
    }
    await measure({ ...bare, duration: 1 });
    const rounds = [
      async () => {
        const b = await measure(bare, plain?.child.pid);
        bareRps.push(b.rps);
        if (b.cpuUs !== undefined) bareCpu.push(b.cpuUs);
      },
      async () => {
        const g = await measure(call, plain?.child.pid);
        gateway.push(g.rps);
        if (g.cpuUs !== undefined) gatewayCpu.push(g.cpuUs);
      },
      async () => {
        const t = await measure(tracedCall, traced?.child.pid);
        tracedRps.push(t.rps);
        if (t.cpuUs !== undefined) tracedCpu.push(t.cpuUs);
      },
      async () => {
        const w = await measure(twinCall, twin?.child.pid);
        twinRps.push(w.rps);
        if (w.cpuUs !== undefined) twinCpu.push(w.cpuUs);
      },
    ];
    // Each round starts with a different target, so none always follows the same one.
    for (let i = 0; i < ROUNDS; i++)
      for (let k = 0; k < rounds.length; k++) await rounds[(i + k) % rounds.length]?.();
  } finally {
    await stop(plain?.child);
    await stop(traced?.child);
    await stop(twin?.child);
    exports = await sink.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(tracedRoot, { recursive: true, force: true });
    rmSync(twinRoot, { recursive: true, force: true });
  }
  // The spans really left: the export thread sent them to the sink.
  if (!(exports > 0)) throw new Error("the traced server exported no spans to the OTLP sink");
  const rps = Math.round(median(gateway));
  const bareMedian = Math.round(median(bareRps));
  const figures: Figure[] = [
    { key: "gateway.rps", value: rps, target: `${(rps / bareMedian).toFixed(2)}× the bare route (≥ 0.5×)` },
    { key: "gateway.bare_rps", value: bareMedian },
  ];
  const twinMedian = Math.round(median(twinRps));
  figures.push({
    key: "gateway.twin_rps",
    value: twinMedian,
    target: `${(twinMedian / rps).toFixed(2)}× gateway.rps: an identical server, export off (the noise of this run)`,
  });
  const otelRps = Math.round(median(tracedRps));
  // The ratio is read round by round: in round i the traced server against the mean of the
  // two export-off servers measured in that same round, then the median over rounds. A
  // ratio of medians lets one server's slow stretch (neighbours come and go within
  // seconds) decide the figure; two identical servers' medians differed by up to 1.3×.
  const perRound = tracedRps.map((t, i) => t / (((gateway[i] ?? 0) + (twinRps[i] ?? 0)) / 2));
  const twinPerRound = twinRps.map((t, i) => t / (gateway[i] ?? 0));
  figures.push({
    key: "gateway.otel_rps",
    value: otelRps,
    target: `${median(perRound).toFixed(2)}× the export-off servers round by round (median of ${ROUNDS}; ${(otelRps / rps).toFixed(2)}× gateway.rps, ${(otelRps / twinMedian).toFixed(2)}× its twin by medians), with OTLP export on (≥ 0.9×)`,
  });
  figures.push({
    key: "gateway.twin_ratio",
    value: Math.round(median(twinPerRound) * 100) / 100,
    target:
      "the twin ÷ gateway.rps round by round: how far two identical servers measure apart (1 = no noise)",
  });
  // Absent, not faked, where /proc is missing.
  if (gatewayCpu.length === ROUNDS && bareCpu.length === ROUNDS) {
    const callUs = median(gatewayCpu);
    const bareUs = median(bareCpu);
    figures.push(
      { key: "gateway.cpu_us", value: round1(callUs), target: `server main-thread CPU per /tools/call` },
      {
        key: "gateway.bare_cpu_us",
        value: round1(bareUs),
        target: `per bare request; ${(bareUs / callUs).toFixed(2)}× by CPU`,
      },
    );
  }
  if (tracedCpu.length === ROUNDS && gatewayCpu.length === ROUNDS && twinCpu.length === ROUNDS) {
    const tracedUs = median(tracedCpu);
    const cpuPerRound = tracedCpu.map((t, i) => t / (((gatewayCpu[i] ?? 0) + (twinCpu[i] ?? 0)) / 2));
    figures.push({
      key: "gateway.otel_cpu_us",
      value: round1(tracedUs),
      target: `per /tools/call with OTLP export on; ${median(cpuPerRound).toFixed(2)}× the export-off servers round by round (${(tracedUs / median(gatewayCpu)).toFixed(2)}× by medians)`,
    });
  }
  return figures;
}
