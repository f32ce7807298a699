// Runs past one machine: runs/s through the PostgreSQL queue with 1 and 3 workers
// (scripted model, a two-step goal, a fresh git worktree per run), event latency from
// the worker's append to an SSE client on an API node (p50/p99), and the run store's
// append throughput. Skips with a message when PostgreSQL's binaries are absent.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createHarness, type Harness } from "@capgate/harness";
import { EventEmitterForRun, newRunId } from "@capgate/loop";
import {
  type Database,
  Notifier,
  openDatabase,
  PgRunStore,
  type RunningWorker,
  RunQueue,
  startWorker,
} from "@capgate/postgres";
import { type RunningServer, startServer } from "@capgate/server";
import { findPostgresBin, startTestCluster } from "@capgate/test-postgres";
import type { Figure } from "../figure.js";

export const name = "queue";

const RUNS = 30;
const TOKEN = "bench-token-0123456789abcdef";

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

async function waitEnded(db: Database, ids: string[]): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    const { rows } = await db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM capgate.runs WHERE id = ANY($1) AND status = 'ended'",
      [ids],
    );
    if (Number(rows[0]?.n) === ids.length) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("runs did not end in time");
}

/** Follow one run over SSE; the latency of each event is its arrival minus its `time` (one machine, one clock). */
async function followLatencies(server: RunningServer, runId: string): Promise<number[]> {
  const response = await fetch(`${server.url}/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const out: number[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    const now = Date.now();
    buffer += decoder.decode(chunk, { stream: true });
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf("\n\n");
      const data = block.match(/^data: (.*)$/m);
      if (!data) continue;
      const event = JSON.parse(data[1] as string) as { time: string; type: string };
      out.push(now - Date.parse(event.time));
    }
  }
  return out;
}

export async function run(): Promise<Figure[]> {
  if (!findPostgresBin()) {
    console.log("queue: skipped: PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin");
    return [];
  }
  const cluster = await startTestCluster();
  const root = mkdtempSync(join(tmpdir(), "capgate-bench-queue-"));
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "README.md"), "bench\n");
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "b",
    GIT_AUTHOR_EMAIL: "b@b",
    GIT_COMMITTER_NAME: "b",
    GIT_COMMITTER_EMAIL: "b@b",
  };
  for (const args of [
    ["init", "-q"],
    ["add", "-A"],
    ["commit", "-q", "-m", "init"],
  ])
    execFileSync("git", args, { cwd: workspace, env });
  const model = join(root, "script.json");
  writeFileSync(
    model,
    JSON.stringify([
      JSON.stringify({ name: "verify", arguments: { claim: "trivial", command: "true" } }),
      JSON.stringify({ name: "finish", arguments: { summary: "done", evidence: "true passed" } }),
    ]),
  );
  const figures: Figure[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  try {
    const url = await cluster.createDatabase("bench");
    const db = await openDatabase({ url });
    closers.push(() => db.close());
    const queue = new RunQueue(db);
    const harnesses: Harness[] = [];
    const workers: RunningWorker[] = [];
    const addWorker = async () => {
      const harness = await createHarness({ workspace, stateDir: join(root, `state-${workers.length}`) });
      harnesses.push(harness);
      const wdb = await openDatabase({ url, poolSize: 4 });
      const worker = await startWorker({
        db: wdb,
        environment: harness.environment,
        model: (spec) => harness.model(spec),
        workspace,
        workRoot: join(root, `work-${workers.length}`),
        concurrency: 2,
      });
      workers.push(worker);
      closers.push(async () => {
        await worker.stop();
        await harness.close();
        await wdb.close();
      });
    };
    const batch = async (label: string) => {
      const ids = Array.from({ length: RUNS }, () => newRunId());
      const started = performance.now();
      for (const id of ids) await queue.enqueue(id, { goal: "trivial", model: `scripted:${model}` });
      await waitEnded(db, ids);
      const seconds = (performance.now() - started) / 1000;
      figures.push({ key: `queue.runs_per_s_${label}`, value: Number((RUNS / seconds).toFixed(2)) });
      return ids;
    };

    await addWorker();
    await batch("1w");
    await addWorker();
    await addWorker();
    await batch("3w");
    const r1 = figures[0]!.value;
    const r3 = figures[1]!.value;
    figures[1]!.target = `${(r3 / r1).toFixed(2)}× one worker (each worker: concurrency 2)`;

    // Event latency: runs submitted through an API node and followed from it as they execute.
    const server = await startServer({
      port: 0,
      workspace,
      stateDir: join(root, "api"),
      token: TOKEN,
      database: url,
      scriptedModelsDir: dirname(model),
    });
    closers.push(() => server.close());
    // One run at a time (the pipeline's own latency), then ten at once (under load: the API
    // node and the workers share this one process and its event loop).
    const latency = async (parallel: number, rounds: number) => {
      const out: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const ids: string[] = [];
        for (let i = 0; i < parallel; i++) {
          const r = await fetch(`${server.url}/runs`, {
            method: "POST",
            headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
            body: JSON.stringify({ goal: "trivial", model: `scripted:${model}` }),
          });
          ids.push(((await r.json()) as { id: string }).id);
        }
        // The first event may be replayed rather than followed: it can be stored before the stream opens.
        for (const l of await Promise.all(ids.map((id) => followLatencies(server, id))))
          out.push(...l.slice(1));
      }
      return out;
    };
    const single = await latency(1, 15);
    figures.push({
      key: "queue.event_latency_p50_ms",
      value: percentile(single, 50),
      target: "one run at a time",
    });
    figures.push({
      key: "queue.event_latency_p99_ms",
      value: percentile(single, 99),
      target: "one run at a time",
    });
    const loaded = await latency(10, 2);
    figures.push({
      key: "queue.event_latency_loaded_p50_ms",
      value: percentile(loaded, 50),
      target: "10 runs at once",
    });
    figures.push({
      key: "queue.event_latency_loaded_p99_ms",
      value: percentile(loaded, 99),
      target: "10 runs at once",
    });

    // Append throughput: 10 runs × 1,000 events through one store, group-committed.
    const notifier = new Notifier(db);
    const store = new PgRunStore(db, notifier);
    const emitters = Array.from(
      { length: 10 },
      () => new EventEmitterForRun(newRunId(), (e) => store.append(e)),
    );
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++)
      for (const e of emitters) {
        if (i === 0)
          e.emit({
            type: "run_started",
            goal: "append",
            profile: "Orchestrator",
            model: "x",
            workspace,
            maxSteps: 1,
            mcp: false,
            kind: "goal",
          });
        else e.emit({ type: "finish_refused", step: i, reason: "bench" });
      }
    await store.flush();
    const appendSeconds = (performance.now() - t0) / 1000;
    figures.push({
      key: "queue.append_eps",
      value: Math.round(10_000 / appendSeconds),
      target: "events/s, one store",
    });
    await store.close();
    await notifier.close();
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster.destroy();
    rmSync(root, { recursive: true, force: true });
  }
  return figures;
}
