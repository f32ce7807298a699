import { EventEmitterForRun, newRunId, type RunEvent } from "@capgate/loop";
import { describePg, useCluster } from "@capgate/test-postgres/vitest";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, openDatabase } from "./database.js";
import { MIGRATIONS } from "./migrations.js";
import { Notifier } from "./notifier.js";
import { PgRunStore } from "./pg-run-store.js";
import { endRun } from "./sweeper.js";

const started = (goal: string) =>
  ({
    type: "run_started",
    goal,
    profile: "Orchestrator",
    model: "scripted",
    workspace: "/w",
    maxSteps: 5,
    mcp: false,
    kind: "goal",
  }) as const;
const stamp = (runId: string, seq: number, body: Record<string, unknown>) =>
  ({ ...body, runId, seq, time: new Date().toISOString() }) as RunEvent;
const ended = (runId: string, seq: number, outcome = "finished") =>
  stamp(runId, seq, { type: "run_ended", outcome, steps: seq, rejections: 0 });
const step = (runId: string, seq: number) =>
  stamp(runId, seq, { type: "finish_refused", step: seq, reason: "r" });

// Strings of any UTF-16 code units, the ones PostgreSQL refuses drawn often.
const anyText = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    fc.constantFrom("\u0000", "\uE000", "\uD800", "\uDFFF", "😀", "\\"),
  ),
  maxLength: 30,
});

describePg("PostgreSQL: lossless events and run_ended as the last event", () => {
  const { cluster } = useCluster();
  let a: Database;
  let b: Database;
  let notifierA: Notifier;
  let notifierB: Notifier;
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);

  beforeAll(async () => {
    const url = await cluster().createDatabase("run_end");
    a = await openDatabase({ url, queue: false });
    b = await openDatabase({ url, queue: false });
    notifierA = new Notifier(a);
    notifierB = new Notifier(b);
    process.on("warning", onWarning);
  }, 60_000);
  afterAll(async () => {
    process.off("warning", onWarning);
    await notifierA?.close();
    await notifierB?.close();
    await a?.close();
    await b?.close();
  });

  it("stores any string a run emits (U+0000, unpaired surrogates, keys too) and reads back exactly what was emitted", async () => {
    const store = new PgRunStore(a, notifierA);
    const reader = new PgRunStore(b, notifierB);
    const runId = newRunId();
    const emitter = new EventEmitterForRun(runId, (e) => store.append(e));
    const texts = fc.sample(fc.tuple(anyText, anyText, anyText), { numRuns: 150, seed: 17 });
    const emitted = [emitter.emit(started("goal \u0000 with a NUL and \uD800"))];
    for (const [i, [output, key, value]] of texts.entries()) {
      emitted.push(
        emitter.emit({
          type: "tool_result",
          step: i + 1,
          tool: "shell.run",
          success: true,
          summary: output,
          via: "native",
          durationMs: 1,
          structuredContent: { [key]: value, nested: [value, { [value]: key }] },
        }),
      );
    }
    // `printf 'x\000y'`, as issue 17 reported it.
    emitted.push(
      emitter.emit({
        type: "tool_result",
        step: 999,
        tool: "shell.run",
        success: true,
        summary: "x\u0000y",
        via: "native",
        durationMs: 1,
      }),
    );
    emitted.push(
      emitter.emit({
        type: "run_ended",
        outcome: "finished",
        steps: 999,
        rejections: 0,
        summary: "done \u0000",
      }),
    );
    await store.flush(runId);
    const back = (await reader.events(runId)) ?? [];
    // jsonb keeps its own key order; every string, key and value is what was emitted.
    expect(back).toEqual(emitted);
    expect(back.map((e) => e.seq)).toEqual(emitted.map((e) => e.seq));
    expect(await reader.summary(runId)).toMatchObject({
      goal: "goal \u0000 with a NUL and \uD800",
      outcome: "finished",
    });
  }, 60_000);

  it("refuses an event after run_ended, naming it: in the store that took the end, from another node (the database), and in plain SQL; a second run_ended is impossible", async () => {
    const store = new PgRunStore(a, notifierA);
    const other = new PgRunStore(b, notifierB);
    const runId = newRunId();
    const first = stamp(runId, 1, started("ends"));
    store.append(first);
    store.append(ended(runId, 2));
    expect(() => store.append(step(runId, 3))).toThrow(
      expect.objectContaining({
        code: "event_after_end",
        message: expect.stringContaining("'finish_refused' (seq 3)"),
      }),
    );
    await store.flush(runId);
    expect(warnings.some((w) => w.includes(`'finish_refused' (seq 3) of run ${runId}`))).toBe(true);

    // Another node does not know the run ended: the database refuses, and the error names the event.
    other.append(step(runId, 3));
    await expect(other.flush(runId)).rejects.toMatchObject({
      code: "event_after_end",
      message: expect.stringContaining(`'finish_refused' (seq 3) of run ${runId}`),
    });
    other.append(ended(runId, 4, "error"));
    await expect(other.flush(runId)).rejects.toMatchObject({ code: "event_after_end" });

    const insert = (seq: number, type: string) =>
      a.pool.query(
        "INSERT INTO capgate.run_events (run_id, seq, type, body, time) VALUES ($1, $2, $3, '{}', now())",
        [runId, seq, type],
      );
    await expect(insert(7, "tool_result")).rejects.toMatchObject({ code: "CG001" });
    await expect(insert(8, "run_ended")).rejects.toMatchObject({ code: "CG001" });
    // Even past the trigger (disabled by an operator), the unique index keeps one run_ended per run.
    const client = await a.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("ALTER TABLE capgate.run_events DISABLE TRIGGER run_events_end_last");
      await expect(
        client.query(
          "INSERT INTO capgate.run_events (run_id, seq, type, body, time) VALUES ($1, 9, 'run_ended', '{}', now())",
          [runId],
        ),
      ).rejects.toMatchObject({ code: "23505", constraint: "run_events_one_end" });
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
    expect((await store.events(runId))?.map((e) => e.type)).toEqual(["run_started", "run_ended"]);
    // A retried batch that had committed (the same events again) is still idempotent.
    const retry = new PgRunStore(a, notifierA);
    retry.append(first);
    await retry.flush(runId);
  }, 60_000);

  it("concurrent appends around the end, from two nodes and the sweeper, in random orders: at most one run_ended, and nothing after it (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          before: fc.integer({ min: 0, max: 6 }),
          after: fc.integer({ min: 0, max: 4 }),
          sweeper: fc.boolean(),
          order: fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
          writers: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        }),
        async ({ before, after, sweeper, order, writers }) => {
          const runId = newRunId();
          await a.pool.query(
            "INSERT INTO capgate.runs (id, goal, kind, status, worker, queued_at) VALUES ($1, 'p', 'goal', 'running', 'w-prop', now())",
            [runId],
          );
          const first = new PgRunStore(a, notifierA);
          first.append(stamp(runId, 1, started("p")));
          await first.flush(runId);
          const end = before + 2;
          const events = [
            ...Array.from({ length: before }, (_, i) => step(runId, i + 2)),
            ended(runId, end),
            ...Array.from({ length: after }, (_, i) => step(runId, end + 1 + i)),
          ];
          // Each event goes through one of two nodes' stores; all are started at once in a random order.
          const stores = [new PgRunStore(a, notifierA), new PgRunStore(b, notifierB)];
          const tasks = events
            .map((e, i) => ({ e, key: order[i] ?? i, store: stores[writers[i] ? 1 : 0]! }))
            .sort((x, y) => x.key - y.key)
            .map(({ e, store }) => async () => {
              try {
                store.append(e);
              } catch {
                // Refused at once (this store took the end already).
              }
              await store.flush(e.runId).catch(() => undefined);
            });
          if (sweeper)
            tasks.splice((order[0] ?? 0) % (tasks.length + 1), 0, () =>
              endRun(a, runId, "worker lost", "w-prop").then(() => undefined),
            );
          await Promise.all(tasks.map((t) => t()));
          const { rows } = await a.pool.query<{ seq: number; type: string }>(
            "SELECT seq, type FROM capgate.run_events WHERE run_id = $1 ORDER BY seq",
            [runId],
          );
          const ends = rows.filter((r) => r.type === "run_ended");
          expect(ends.length).toBeLessThanOrEqual(1);
          if (ends[0]) expect(rows.at(-1)).toEqual(ends[0]);
          const run = await a.pool.query<{ status: string }>(
            "SELECT status FROM capgate.runs WHERE id = $1",
            [runId],
          );
          expect(run.rows[0]!.status === "ended").toBe(ends.length === 1);
        },
      ),
      { numRuns: 40 },
    );
  }, 300_000);

  it("a batch the database refuses: flush(runId) rejects, the run's later events are refused, its run_ended is still stored right after the last stored event", async () => {
    await a.pool.query(`CREATE OR REPLACE FUNCTION capgate.test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.body::text LIKE '%REFUSE-ME%' THEN RAISE EXCEPTION 'test refuses this event'; END IF;
        RETURN NEW;
      END $$`);
    await a.pool.query(
      "CREATE TRIGGER test_refuse BEFORE INSERT ON capgate.run_events FOR EACH ROW EXECUTE FUNCTION capgate.test_refuse()",
    );
    try {
      const store = new PgRunStore(a, notifierA);
      const runId = newRunId();
      const bystander = newRunId();
      const emitter = new EventEmitterForRun(runId, (e) => store.append(e), {
        flush: () => store.flush(runId),
      });
      const other = new EventEmitterForRun(bystander, (e) => store.append(e), {
        flush: () => store.flush(bystander),
      });
      emitter.emit(started("refused"));
      other.emit(started("bystander"));
      await emitter.stored();
      emitter.emit({ type: "finish_refused", step: 1, reason: "REFUSE-ME" });
      other.emit({ type: "finish_refused", step: 1, reason: "fine" });
      await expect(emitter.stored()).rejects.toMatchObject({
        code: "events_not_stored",
        message: expect.stringContaining("test refuses this event"),
      });
      // Another run in the same store is not held up by it.
      await other.stored();
      emitter.emit({ type: "finish_refused", step: 2, reason: "later" });
      emitter.emit({
        type: "run_ended",
        outcome: "error",
        steps: 2,
        rejections: 0,
        error: "events could not be stored",
      });
      await store.flush(runId).catch(() => undefined);
      const stored = (await store.events(runId)) ?? [];
      expect(stored.map((e) => [e.seq, e.type])).toEqual([
        [1, "run_started"],
        [2, "run_ended"],
      ]);
      expect(await store.summary(runId)).toMatchObject({ phase: "ended", outcome: "error" });
    } finally {
      await a.pool.query("DROP TRIGGER test_refuse ON capgate.run_events");
    }
  }, 60_000);

  it("a follower whose read fails (a busy pool) tries again: it still reaches run_ended without another NOTIFY", async () => {
    const writer = new PgRunStore(a, notifierA);
    const reader = new PgRunStore(b, notifierB);
    const runId = newRunId();
    let failing = true;
    let failures = 0;
    const read = reader.events.bind(reader);
    reader.events = async (id, after) => {
      if (failing) {
        failures++;
        throw new Error("timeout exceeded when trying to connect");
      }
      return read(id, after);
    };
    const seen: RunEvent[] = [];
    let resolveEnd: () => void = () => undefined;
    const end = new Promise<void>((resolve) => {
      resolveEnd = resolve;
    });
    reader.subscribe(runId, (e) => {
      seen.push(e);
      if (e.type === "run_ended") resolveEnd();
    });
    writer.append(stamp(runId, 1, started("busy")));
    writer.append(ended(runId, 2));
    await writer.flush(runId);
    // Every read so far failed, including the one the run's last NOTIFY woke; none will come again.
    while (failures < 2) await new Promise((r) => setTimeout(r, 20));
    failing = false;
    await end;
    expect(seen.map((e) => e.seq)).toEqual([1, 2]);
  }, 60_000);

  it("when even run_ended cannot be stored, endRun still marks the run ended with its error", async () => {
    const runId = newRunId();
    await a.pool.query(
      "INSERT INTO capgate.runs (id, goal, kind, status, worker, queued_at) VALUES ($1, 'e', 'goal', 'running', 'w-e', now())",
      [runId],
    );
    await a.pool.query(`CREATE OR REPLACE FUNCTION capgate.test_refuse_end() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'run_ended' THEN RAISE EXCEPTION 'test refuses run_ended'; END IF;
        RETURN NEW;
      END $$`);
    await a.pool.query(
      "CREATE TRIGGER test_refuse_end BEFORE INSERT ON capgate.run_events FOR EACH ROW EXECUTE FUNCTION capgate.test_refuse_end()",
    );
    try {
      expect(await endRun(a, runId, "events could not be stored: x\u0000y", "w-e")).toBe(true);
    } finally {
      await a.pool.query("DROP TRIGGER test_refuse_end ON capgate.run_events");
    }
    const { rows } = await a.pool.query("SELECT status, outcome FROM capgate.runs WHERE id = $1", [runId]);
    expect(rows[0]).toEqual({ status: "ended", outcome: "error" });
    const summary = await new PgRunStore(a, notifierA).summary(runId);
    expect(summary).toMatchObject({ phase: "ended", outcome: "error" });
    expect(warnings.some((w) => w.includes(`run ${runId} was marked ended`))).toBe(true);
  }, 60_000);
});

describePg("migration 2 on a database written before it", () => {
  const { cluster } = useCluster();

  it("moves events stored after a run's first run_ended aside, realigns the run row, escapes U+E000 in text, then enforces the rule", async () => {
    const url = await cluster().createDatabase("legacy");
    // A database at schema version 1, as earlier capgate versions left it.
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query("CREATE SCHEMA capgate");
      await raw.query(
        "CREATE TABLE capgate.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      await raw.query(MIGRATIONS[0]!.sql);
      await raw.query("INSERT INTO capgate.migrations (version, name) VALUES (1, $1)", [MIGRATIONS[0]!.name]);
      const body = (e: RunEvent) => JSON.stringify(e);
      const events = [
        stamp("r-late", 1, started("late")),
        ended("r-late", 2),
        step("r-late", 3),
        stamp("r-twice", 1, started("twice \uE0000041")),
        ended("r-twice", 2),
        ended("r-twice", 3, "error"),
        stamp("r-fine", 1, started("fine")),
        ended("r-fine", 2),
      ];
      for (const e of events) {
        await raw.query(
          "INSERT INTO capgate.run_events (run_id, seq, type, body, time) VALUES ($1, $2, $3, $4, $5)",
          [e.runId, e.seq, e.type, body(e), e.time],
        );
      }
      for (const [id, goal, outcome, n] of [
        ["r-late", "late", "finished", 3],
        ["r-twice", "twice \uE0000041", "error", 3],
        ["r-fine", "fine", "finished", 2],
      ] as const) {
        await raw.query(
          "INSERT INTO capgate.runs (id, goal, kind, status, outcome, events, started_at) VALUES ($1, $2, 'goal', 'ended', $3, $4, now())",
          [id, goal, outcome, n],
        );
      }
    } finally {
      await raw.end();
    }

    const db = await openDatabase({ url, queue: false });
    const notifier = new Notifier(db);
    try {
      expect(db.schemaVersion).toBeGreaterThanOrEqual(2);
      const store = new PgRunStore(db, notifier);
      expect((await store.events("r-late"))?.map((e) => e.type)).toEqual(["run_started", "run_ended"]);
      expect((await store.events("r-twice"))?.map((e) => [e.seq, e.type])).toEqual([
        [1, "run_started"],
        [2, "run_ended"],
      ]);
      const moved = await db.pool.query(
        "SELECT run_id, seq FROM capgate.run_events_after_end ORDER BY run_id, seq",
      );
      expect(moved.rows).toEqual([
        { run_id: "r-late", seq: 3 },
        { run_id: "r-twice", seq: 3 },
      ]);
      // The row says what the run_ended that stays says; a legacy U+E000 reads back unchanged.
      expect(await store.summary("r-twice")).toMatchObject({
        outcome: "finished",
        events: 2,
        goal: "twice \uE0000041",
      });
      expect((await store.summary("r-fine"))?.events).toBe(2);
      store.append(step("r-fine", 3));
      await expect(store.flush("r-fine")).rejects.toMatchObject({ code: "event_after_end" });
    } finally {
      await notifier.close();
      await db.close();
    }
  }, 120_000);
});
