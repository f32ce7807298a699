// Two "nodes" on one database: one appends a run's events, the other follows them live.
// Run with a database URL: `CAPGATE_DATABASE_URL=postgresql://… node examples/store-and-follow.js`.
import { EventEmitterForRun, newRunId } from "@capgate/loop";
import { Notifier, openDatabase, PgRunStore } from "@capgate/postgres";

const url = process.env.CAPGATE_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/capgate";
// Migrates (under an advisory lock) and fails fast, naming the setting, if the database is unreachable.
const writerDb = await openDatabase({ url, setting: "CAPGATE_DATABASE_URL" });
const readerDb = await openDatabase({ url, setting: "CAPGATE_DATABASE_URL" });
const writer = new PgRunStore(writerDb, new Notifier(writerDb));
const readerNotifier = new Notifier(readerDb);
const reader = new PgRunStore(readerDb, readerNotifier);

const runId = newRunId();
const seen = new Promise<void>((resolve) => {
  reader.subscribe(runId, (event) => {
    console.log(`reader got #${event.seq} ${event.type}`);
    if (event.type === "run_ended") resolve();
  });
});
await new Promise((r) => setTimeout(r, 100)); // the reader's LISTEN is in place

const emitter = new EventEmitterForRun(runId, (event) => writer.append(event));
emitter.emit({
  type: "run_started",
  goal: "demo",
  profile: "Orchestrator",
  model: "none",
  workspace: ".",
  maxSteps: 1,
  mcp: false,
  kind: "goal",
});
emitter.emit({ type: "run_ended", outcome: "finished", steps: 0, rejections: 0, summary: "nothing to do" });
await writer.flush(); // resolves once both events are committed
await seen;
console.log(await reader.summary(runId)); // { runId, goal: "demo", outcome: "finished", phase: "ended", … }

await readerNotifier.close();
await Promise.all([writerDb.close(), readerDb.close()]);
