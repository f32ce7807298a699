import { EventEmitterForRun, newRunId, type RunEvent } from "@capgate/loop";
import { argumentsHash } from "@capgate/schema";
import { describePg, useCluster } from "@capgate/test-postgres/vitest";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, openDatabase } from "./database.js";
import { Notifier } from "./notifier.js";
import { PgApprovalRegistry } from "./pg-approvals.js";
import { PgMemoryStore } from "./pg-memory.js";
import { PgRunStore } from "./pg-run-store.js";

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

const until = async (check: () => boolean | Promise<boolean>, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** The approval request of a `shell.run ls` call, as the loop makes it. */
const lsRequest = async () =>
  ({
    tool: "shell.run",
    capability: "shell",
    risk: "exec",
    arguments: { command: "ls" },
    argumentsHash: await argumentsHash({ command: "ls" }),
    description: "shell.run ls",
  }) as const;

describePg("PostgreSQL run store, approvals and memory", () => {
  const { cluster } = useCluster();
  let a: Database;
  let b: Database;
  let notifierA: Notifier;
  let notifierB: Notifier;

  beforeAll(async () => {
    const url = await cluster().createDatabase("store");
    a = await openDatabase({ url, queue: false });
    b = await openDatabase({ url, queue: false });
    notifierA = new Notifier(a);
    notifierB = new Notifier(b);
  }, 60_000);
  afterAll(async () => {
    await notifierA?.close();
    await notifierB?.close();
    await a?.close();
    await b?.close();
  });

  it("stores appended events in order, keeps the runs row in step, and another node's subscriber follows live", async () => {
    const writer = new PgRunStore(a, notifierA);
    const reader = new PgRunStore(b, notifierB);
    const runId = newRunId();
    const live: RunEvent[] = [];
    reader.subscribe(runId, (e) => live.push(e));
    await new Promise((r) => setTimeout(r, 200)); // LISTEN in place
    const emitter = new EventEmitterForRun(runId, (e) => writer.append(e));
    emitter.emit(started("store test"));
    emitter.emit({
      type: "profile_changed",
      from: "Orchestrator",
      to: "Coder",
      reason: "inferred",
      loaded: ["fs"],
    });
    for (let i = 1; i <= 200; i++) emitter.emit({ type: "finish_refused", step: i, reason: `r${i}` });
    emitter.emit({ type: "run_ended", outcome: "finished", steps: 200, rejections: 0, summary: "done" });
    await writer.flush();
    const stored = (await reader.events(runId)) ?? [];
    expect(stored.map((e) => e.seq)).toEqual([...Array(203).keys()].map((i) => i + 1));
    await until(() => live.length === 203);
    expect(live.map((e) => e.seq)).toEqual(stored.map((e) => e.seq));
    expect((await reader.events(runId, 200))?.map((e) => e.seq)).toEqual([201, 202, 203]);
    const summary = await reader.summary(runId);
    expect(summary).toMatchObject({
      runId,
      goal: "store test",
      profile: "Coder",
      outcome: "finished",
      steps: 200,
      events: 203,
      phase: "ended",
    });
    expect((await reader.runs(10)).map((s) => s.runId)).toContain(runId);
    expect(await reader.events(newRunId())).toBeUndefined();
  }, 60_000);

  it("an append replayed after a lost connection is idempotent; a different event at a stored seq is a conflict, never dropped silently", async () => {
    const store = new PgRunStore(a, notifierA);
    const runId = newRunId();
    const emitter = new EventEmitterForRun(runId, (e) => store.append(e));
    const first = emitter.emit(started("idempotent"));
    await store.flush();
    store.append(first); // the same event again, as a retried batch would send it
    await store.flush();
    expect((await store.events(runId))?.length).toBe(1);
    store.append({ ...first, goal: "something else" } as RunEvent);
    await expect(store.flush()).rejects.toMatchObject({ code: "event_conflict" });
    // Later events of that run are not written past the conflict (no gap), and the run is marked failed.
    emitter.emit({ type: "finish_refused", step: 1, reason: "x" });
    await store.flush().catch(() => undefined);
    expect((await store.events(runId))?.length).toBe(1);
    expect(store.failure(runId)?.message).toContain(`Event 1 of run ${runId}`);
  }, 30_000);

  it("survives PostgreSQL restarting mid-run: appends are retried and every event is stored once, in order; the live reader catches up", async () => {
    const writer = new PgRunStore(a, notifierA);
    const reader = new PgRunStore(b, notifierB);
    const runId = newRunId();
    const live: RunEvent[] = [];
    reader.subscribe(runId, (e) => live.push(e));
    const emitter = new EventEmitterForRun(runId, (e) => writer.append(e));
    emitter.emit(started("restart"));
    for (let i = 1; i <= 20; i++) emitter.emit({ type: "finish_refused", step: i, reason: `before ${i}` });
    await writer.flush();
    await cluster().stop("fast");
    for (let i = 21; i <= 40; i++) emitter.emit({ type: "finish_refused", step: i, reason: `during ${i}` });
    await new Promise((r) => setTimeout(r, 500));
    await cluster().start();
    for (let i = 41; i <= 60; i++) emitter.emit({ type: "finish_refused", step: i, reason: `after ${i}` });
    emitter.emit({ type: "run_ended", outcome: "finished", steps: 60, rejections: 0 });
    await writer.flush();
    const stored = (await reader.events(runId)) ?? [];
    expect(stored.map((e) => e.seq)).toEqual([...Array(62).keys()].map((i) => i + 1));
    await until(() => live.at(-1)?.type === "run_ended");
    expect(live.map((e) => e.seq)).toEqual(stored.map((e) => e.seq));
  }, 90_000);

  it("an approval requested on one node is answered on another and reaches the waiting hook; exactly one answer wins", async () => {
    const worker = new PgApprovalRegistry(a, notifierA);
    const api = new PgApprovalRegistry(b, notifierB);
    const runId = newRunId();
    const request = await lsRequest();
    const yes = { approve: true, decidedBy: "api:owner" };
    // The hook announces (and the loop emits approval_requested) only once the row is in:
    // the other node finds it pending the moment it is announced, no polling.
    let announced: Promise<Awaited<ReturnType<typeof api.pendingFor>>> | undefined;
    expect(worker.hook.announcesPending).toBe(true);
    const waiting = worker.hook(
      { ...request, approvalId: "ap-1", runId, onPending: () => (announced = api.pendingFor(runId)) },
      new AbortController().signal,
    );
    await until(() => announced !== undefined);
    expect(await announced).toEqual([
      expect.objectContaining({
        approvalId: "ap-1",
        tool: "shell.run",
        runId,
        argumentsHash: request.argumentsHash,
      }),
    ]);
    expect(await api.resolve(newRunId(), "ap-1", yes)).toMatchObject({ ok: false, refused: "not_found" }); // wrong run
    expect(await api.resolve(runId, "ap-1", yes)).toMatchObject({
      ok: true,
      approval: { approvalId: "ap-1" },
    });
    expect(await api.resolve(runId, "ap-1", { ...yes, approve: false })).toMatchObject({
      ok: false,
      refused: "already_answered",
    });
    await expect(waiting).resolves.toEqual({ approved: true, scope: "once", decidedBy: "api:owner" });
    expect(await api.pendingFor(runId)).toEqual([]);

    const controller = new AbortController();
    const aborted = worker.hook({ ...request, approvalId: "ap-2", runId }, controller.signal);
    await until(async () => (await api.pendingFor(runId)).length === 1);
    controller.abort();
    await expect(aborted).rejects.toThrow(/stopped/);
    await until(async () => (await api.pendingFor(runId)).length === 0);
    expect(await api.resolve(runId, "ap-2", yes)).toMatchObject({ ok: false, refused: "already_answered" });

    const denied = worker.hook({ ...request, approvalId: "ap-3", runId }, new AbortController().signal);
    await until(async () => (await api.pendingFor(runId)).length === 1);
    await api.resolve(runId, "ap-3", { ...yes, approve: false });
    await expect(denied).resolves.toMatchObject({ approved: false, decidedBy: "api:owner" });
  }, 30_000);

  it("a status read that fails (no connection in time on a loaded machine) is tried again: the answer still reaches the waiting hook", async () => {
    // The worker's pool fails its first three status reads, as a pool does when no connection
    // comes within its timeout: the read after the INSERT and the one the NOTIFY starts.
    let failures = 0;
    const pool = new Proxy(a.pool, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (prop !== "query" || typeof value !== "function")
          return typeof value === "function" ? value.bind(target) : value;
        return (text: unknown, ...rest: unknown[]) => {
          if (typeof text === "string" && text.startsWith("SELECT status") && failures < 3) {
            failures++;
            return Promise.reject(new Error("timeout exceeded when trying to connect"));
          }
          return (value as (...args: unknown[]) => unknown).call(target, text, ...rest);
        };
      },
    });
    const worker = new PgApprovalRegistry({ ...a, pool } as Database, notifierA);
    const api = new PgApprovalRegistry(b, notifierB);
    const runId = newRunId();
    const waiting = worker.hook(
      { ...(await lsRequest()), approvalId: "ap-flaky", runId },
      new AbortController().signal,
    );
    await until(async () => (await api.pendingFor(runId)).length === 1);
    expect(await api.resolve(runId, "ap-flaky", { approve: true, decidedBy: "api:owner" })).toMatchObject({
      ok: true,
    });
    await expect(waiting).resolves.toEqual({ approved: true, scope: "once", decidedBy: "api:owner" });
    expect(failures).toBeGreaterThanOrEqual(2);
  });

  it("an answer binds across nodes: a different argumentsHash approves nothing, the scope and who decided reach the worker, expiry is the database's", async () => {
    const worker = new PgApprovalRegistry(a, notifierA, { timeoutMs: 60_000 });
    const api = new PgApprovalRegistry(b, notifierB);
    const runId = newRunId();
    const args = { path: "a.txt", text: "x" };
    const request = {
      tool: "fs.write",
      capability: "fs",
      risk: "write",
      arguments: args,
      argumentsHash: await argumentsHash(args),
      description: "fs.write a.txt",
    } as const;
    expect(worker.hook.timeoutMs).toBe(60_000);
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const waiting = worker.hook(
      { ...request, approvalId: "bind-1", runId, expiresAt },
      new AbortController().signal,
    );
    await until(async () => (await api.pendingFor(runId)).length === 1);
    const [pending] = await api.pendingFor(runId);
    expect(pending).toMatchObject({ argumentsHash: request.argumentsHash, expiresAt });

    const other = await argumentsHash({ ...args, text: "y" });
    const mismatch = await api.resolve(runId, "bind-1", {
      approve: true,
      argumentsHash: other,
      decidedBy: "api:o",
    });
    expect(mismatch).toMatchObject({ ok: false, refused: "arguments_mismatch" });
    expect(await api.pendingFor(runId)).toHaveLength(1);

    const ok = await api.resolve(runId, "bind-1", {
      approve: true,
      scope: "run",
      argumentsHash: request.argumentsHash,
      decidedBy: "api:o",
    });
    expect(ok.ok).toBe(true);
    await expect(waiting).resolves.toEqual({ approved: true, scope: "run", decidedBy: "api:o" });

    // Past expires_at by the database's clock: no answer settles it, whatever the worker's timer does.
    const expired = worker.hook(
      { ...request, approvalId: "bind-2", runId, expiresAt: new Date(Date.now() + 60_000).toISOString() },
      new AbortController().signal,
    );
    await until(async () => (await api.pendingFor(runId)).length === 1);
    await b.pool.query(
      "UPDATE capgate.approvals SET expires_at = now() - interval '1 second' WHERE approval_id = 'bind-2'",
    );
    const late = await api.resolve(runId, "bind-2", { approve: true, decidedBy: "api:o" });
    expect(late).toMatchObject({ ok: false, refused: "expired" });
    worker.denyAll("test over");
    await expect(expired).rejects.toMatchObject({ decidedBy: "shutdown" });

    // The worker's own deadline: the row ends as expired, and a later answer says so.
    const short = new PgApprovalRegistry(a, notifierA, { timeoutMs: 1 });
    const timedOut = short.hook({ ...request, approvalId: "bind-3", runId }, new AbortController().signal);
    await expect(timedOut).rejects.toMatchObject({ decidedBy: "timeout" });
    expect(await api.resolve(runId, "bind-3", { approve: true, decidedBy: "api:o" })).toMatchObject({
      ok: false,
      refused: "expired",
    });
  }, 30_000);

  it("memory is shared between nodes and ranked by full-text search (tags weigh more, any term matches, no query syntax leaks)", async () => {
    const m1 = new PgMemoryStore(a);
    const m2 = new PgMemoryStore(b);
    const deploy = await m1.remember({ text: "The staging deploy needs the VPN", tags: ["deploy"] });
    await m1.remember({ text: "Tests run with pnpm test in the repository root", tags: ["testing"] });
    await m1.remember({ text: "Mentions deploy once", tags: [] });
    const hits = await m2.search("how do I deploy to staging", 5);
    expect(hits[0]?.id).toBe(deploy.id);
    expect(hits.map((h) => h.text)).toContain("Mentions deploy once");
    expect(hits.some((h) => h.text.startsWith("Tests run"))).toBe(false);
    expect(await m2.search("running tests", 5)).toHaveLength(1);
    expect(await m2.search("' | !( :* & <->", 5)).toEqual([]);
    expect(await m2.search("", 5)).toEqual([]);
    expect((await m2.list(10)).length).toBe(3);
    expect(await m2.forget(deploy.id)).toBe(true);
    expect(await m1.forget(deploy.id)).toBe(false);
    expect((await m1.search("staging", 5)).length).toBe(0);
  }, 30_000);
});
