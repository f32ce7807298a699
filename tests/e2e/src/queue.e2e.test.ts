import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { type Database, openDatabase } from "@capgate/postgres";
import { startTestCluster, type TestCluster } from "@capgate/test-postgres";
import { needs } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiNode,
  type Dirs,
  follow,
  makeDirs,
  type Proc,
  type SseEvent,
  script,
  startApiNode,
  startWorkerNode,
} from "./queue-cluster.js";

// Real processes on one real PostgreSQL: 2 API nodes (`capgate serve --database`) and
// 3 workers (`capgate worker`). Skipped without PostgreSQL's binaries, failing instead
// under CAPGATE_REQUIRE_SYSTEM_TESTS (CI).
const postgres = needs(["postgres"]);
const describeQueue = (name: string, body: () => void) =>
  describe.skipIf(postgres.skip)(name + postgres.note, body);

const action = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });
const token = randomBytes(24).toString("hex");

function finishing(file: string): unknown[] {
  return [
    action("capability_call", {
      tool: "fs.write",
      arguments: { path: file, content: `written for ${file}\n` },
    }),
    action("verify", { claim: `${file} exists`, command: `test -f ${file}` }),
    action("finish", { summary: `wrote ${file}`, evidence: "test -f passed" }),
  ];
}

function expectGapFree(events: SseEvent[], from = 1): void {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + from));
  for (const e of events) expect(e.data.seq).toBe(e.id);
}

describeQueue("runs on PostgreSQL + graphile-worker across processes", () => {
  let cluster: TestCluster;
  let database: string;
  let db: Database;
  let dirs: Dirs;
  let nodes: ApiNode[] = [];
  let workers: Proc[] = [];

  beforeAll(async () => {
    cluster = await startTestCluster();
    database = await cluster.createDatabase("queue_e2e");
    dirs = makeDirs();
    // Three workers and two API nodes start at once: their migrations race and must not fail.
    const started = await Promise.all([
      startWorkerNode(dirs, database, "w1"),
      startWorkerNode(dirs, database, "w2"),
      startWorkerNode(dirs, database, "w3"),
      startApiNode(dirs, database, token, "a"),
      startApiNode(dirs, database, token, "b"),
    ]);
    workers = started.slice(0, 3) as Proc[];
    nodes = started.slice(3) as ApiNode[];
    db = await openDatabase({ url: database, migrate: false });
  }, 180_000);

  afterAll(async () => {
    for (const p of [...workers, ...nodes.map((n) => n.proc)]) p.child.kill("SIGTERM");
    await Promise.all([...workers, ...nodes.map((n) => n.proc)].map((p) => p.exited));
    await db?.close();
    await cluster?.destroy();
    dirs?.cleanup();
  }, 180_000);

  const submit = async (node: ApiNode, body: Record<string, unknown>): Promise<string> => {
    const response = await node.api("/runs", body);
    const json = (await response.json()) as { id: string; status: string };
    expect(response.status, JSON.stringify(json)).toBe(202);
    expect(json.status).toBe("queued");
    return json.id;
  };

  // Each run starts a sandbox for its verify command and about ten for its publish (git in
  // bubblewrap): the wait is derived from that work — seconds per run on a busy two-core
  // machine — not a speed expectation; the runs report their end as events, awaited below.
  const RUNS = 60;
  it(
    "60 runs submitted round-robin to both API nodes each complete exactly once, followed gap-free over SSE from the other node",
    async () => {
      const ids: Array<{ id: string; via: number }> = [];
      for (let i = 0; i < RUNS; i++) {
        const via = i % 2;
        const model = script(dirs, `r${i}`, finishing(`out-${i}.txt`));
        ids.push({
          id: await submit(nodes[via]!, { goal: `write out-${i}.txt`, profile: "Coder", model }),
          via,
        });
      }
      const followed = await Promise.all(ids.map(({ id, via }) => follow(nodes[1 - via]!, token, id)));
      for (const [i, { events, ended }] of followed.entries()) {
        expect(ended, `run ${ids[i]!.id}`).toBe(true);
        expectGapFree(events);
        expect(events.filter((e) => e.data.type === "run_started")).toHaveLength(1);
        const end = events.filter((e) => e.data.type === "run_ended");
        expect(end).toHaveLength(1);
        // On failure, say why: the run's end and the step before it.
        expect(end[0]!.data.outcome, JSON.stringify(events.slice(-3).map((e) => e.data))).toBe("finished");
        expect(events.at(-1)!.data.type).toBe("run_ended");
      }
      // The stream stops at run_ended, so it cannot show an event stored after it: the store must not hold one.
      for (const [i, { events }] of followed.entries()) {
        const { rows: last } = await db.pool.query<{ n: number; type: string }>(
          "SELECT count(*) OVER ()::int AS n, type FROM capgate.run_events WHERE run_id = $1 ORDER BY seq DESC LIMIT 1",
          [ids[i]!.id],
        );
        expect(last[0], `run ${ids[i]!.id}`).toEqual({ n: events.length, type: "run_ended" });
      }
      const { rows } = await db.pool.query<{
        status: string;
        outcome: string;
        worker: string;
        result: { kind: string; branch?: string };
      }>("SELECT status, outcome, worker, result FROM capgate.runs WHERE id = ANY($1)", [
        ids.map((r) => r.id),
      ]);
      expect(rows).toHaveLength(RUNS);
      expect(rows.every((r) => r.status === "ended" && r.outcome === "finished")).toBe(true);
      // Work was spread over the workers; each run published its change as a branch of the workspace repo.
      expect(new Set(rows.map((r) => r.worker)).size).toBeGreaterThan(1);
      expect(rows.filter((r) => r.result?.kind !== "branch").map((r) => r.result)).toEqual([]);
      const branches = execFileSync("git", ["branch", "--list", "capgate/run-*"], {
        cwd: dirs.workspace,
        encoding: "utf8",
      });
      for (const { id } of ids) expect(branches).toContain(`capgate/run-${id}`);
      const shown = execFileSync("git", ["show", `capgate/run-${ids[7]!.id}:out-7.txt`], {
        cwd: dirs.workspace,
        encoding: "utf8",
      });
      expect(shown).toBe("written for out-7.txt\n");
      // GET /runs on either node lists them as ended.
      const listed = (await (await nodes[0]!.api("/runs?limit=100")).json()) as Array<{
        id: string;
        status: string;
      }>;
      for (const { id } of ids) expect(listed.find((r) => r.id === id)?.status).toBe("ended");
    },
    RUNS * 15_000,
  );

  it("a tool output holding U+0000 (printf 'x\\000y') is stored and streamed exactly, and the run goes on to finish", async () => {
    const model = script(dirs, "nul", [
      action("capability_call", { tool: "shell.run", arguments: { command: "printf 'x\\000y'" } }),
      ...finishing("after-nul.txt"),
    ]);
    const id = await submit(nodes[0]!, { goal: "print a NUL", profile: "Coder", model });
    const { events, ended } = await follow(nodes[1]!, token, id);
    expect(ended).toBe(true);
    expectGapFree(events);
    const output = events.find((e) => e.data.type === "tool_result" && e.data.tool === "shell.run");
    expect(JSON.stringify(output?.data)).toContain("x\\u0000y");
    expect(events.at(-1)!.data).toMatchObject({ type: "run_ended", outcome: "finished" });
    const stored = await db.pool.query(
      "SELECT count(*)::int AS n FROM capgate.run_events WHERE run_id = $1",
      [id],
    );
    expect(stored.rows[0].n).toBe(events.length);
  }, 180_000);

  it("an event the database refuses stops the run before its next step: the next command never runs, the run ends with the error", async () => {
    await db.pool.query(`CREATE OR REPLACE FUNCTION capgate.e2e_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'tool_result' AND NEW.body::text LIKE '%REFUSE-ME%' THEN RAISE EXCEPTION 'e2e refuses this event'; END IF;
        RETURN NEW;
      END $$`);
    await db.pool.query(
      "CREATE TRIGGER e2e_refuse BEFORE INSERT ON capgate.run_events FOR EACH ROW EXECUTE FUNCTION capgate.e2e_refuse()",
    );
    try {
      const model = script(dirs, "refused", [
        action("capability_call", { tool: "shell.run", arguments: { command: "printf 'REFUSE-%s' ME" } }),
        ...finishing("after-refusal.txt"),
      ]);
      const id = await submit(nodes[0]!, { goal: "refused output", profile: "Coder", model });
      const { events, ended } = await follow(nodes[1]!, token, id);
      expect(ended).toBe(true);
      expectGapFree(events);
      const end = events.at(-1)!.data;
      expect(end).toMatchObject({ type: "run_ended", outcome: "error" });
      expect(String(end.error)).toContain("stopped before its next step");
      // The write of the next step never ran: not in the trace, not on the published branch.
      expect(events.some((e) => e.data.type === "tool_called" && e.data.tool === "fs.write")).toBe(false);
      const { rows } = await db.pool.query<{
        status: string;
        outcome: string;
        result: { kind: string; branch?: string };
      }>("SELECT status, outcome, result FROM capgate.runs WHERE id = $1", [id]);
      expect(rows[0]).toMatchObject({ status: "ended", outcome: "error" });
      if (rows[0]!.result?.branch) {
        const files = execFileSync("git", ["ls-tree", "-r", "--name-only", rows[0]!.result.branch], {
          cwd: dirs.workspace,
          encoding: "utf8",
        });
        expect(files).not.toContain("after-refusal.txt");
      }
    } finally {
      await db.pool.query("DROP TRIGGER e2e_refuse ON capgate.run_events");
    }
  }, 180_000);

  it("an approval requested on a worker is answered on either API node", async () => {
    for (const answerVia of [0, 1]) {
      const model = script(dirs, `ap${answerVia}`, finishing(`approved-${answerVia}.txt`));
      const id = await submit(nodes[1 - answerVia]!, {
        goal: "write with approval",
        profile: "Coder",
        model,
        approval: "always",
      });
      const answered: string[] = [];
      const problems: string[] = [];
      const { events, ended } = await follow(nodes[1 - answerVia]!, token, id, {
        onEvent: (e) => {
          if (e.data.type !== "approval_requested") return undefined;
          const approvalId = String(e.data.approvalId);
          answered.push(approvalId);
          void (async () => {
            // The other node sees it pending the moment the event arrives (the worker's hook
            // announces only after its INSERT) and answers it.
            const view = (await (await nodes[answerVia]!.api(`/runs/${id}`)).json()) as {
              pendingApprovals: Array<{ approvalId: string }>;
            };
            if (!view.pendingApprovals.some((p) => p.approvalId === approvalId))
              problems.push(`${approvalId} was not pending on node ${answerVia} when its event arrived`);
            const r = await nodes[answerVia]!.api(`/runs/${id}/approvals/${approvalId}`, { approve: true });
            if (r.status !== 200) problems.push(`answering ${approvalId} on node ${answerVia}: ${r.status}`);
          })().catch((error: unknown) => problems.push(String(error)));
          return undefined;
        },
      });
      expect(problems).toEqual([]);
      expect(ended).toBe(true);
      expectGapFree(events);
      expect(answered.length).toBeGreaterThanOrEqual(2); // fs.write and the verify command
      const resolved = events.filter((e) => e.data.type === "approval_resolved");
      expect(resolved.map((e) => e.data.approved)).toEqual(answered.map(() => true));
      expect(events.find((e) => e.data.type === "run_ended")?.data.outcome).toBe("finished");
    }
  }, 180_000);

  it("kill -9 of an API node: the client resumes on the other with Last-Event-ID, without loss or duplicates", async () => {
    // A slower run: each verify sleeps, so the stream is cut mid-run.
    const slow = [
      action("verify", { claim: "a", command: "sleep 0.4" }),
      action("verify", { claim: "b", command: "sleep 0.4" }),
      action("verify", { claim: "c", command: "sleep 0.4" }),
      action("finish", { summary: "slow done", evidence: "sleeps passed" }),
    ];
    const id = await submit(nodes[0]!, {
      goal: "slow run",
      profile: "Coder",
      model: script(dirs, "slow", slow),
    });
    const victim = nodes[1]!;
    const first = await follow(victim, token, id, {
      onEvent: (e) => {
        if (e.data.type === "verified") {
          victim.proc.child.kill("SIGKILL");
          return "stop";
        }
        return undefined;
      },
    });
    await victim.proc.exited;
    expect(first.ended).toBe(false);
    const last = first.events.at(-1)!.id;
    const rest = await follow(nodes[0]!, token, id, { lastEventId: last });
    expect(rest.ended).toBe(true);
    expectGapFree([...first.events, ...rest.events]);
    expect(rest.events[0]!.id).toBe(last + 1);
    // Bring the second API node back for the rest of the file.
    nodes[1] = await startApiNode(dirs, database, token, "b2");
  }, 180_000);

  it("kill -9 of a worker mid-run: its run ends as 'worker lost' within a bounded time, never rerun; the others finish", async () => {
    const dump = setTimeout(async () => {
      const runs = await db.pool.query(
        "SELECT id, status, worker, events FROM capgate.runs WHERE status <> 'ended'",
      );
      const jobs = await db.pool.query(
        "SELECT key, locked_at, locked_by, attempts FROM graphile_worker.jobs",
      );
      console.error("still open after 60 s:", JSON.stringify({ runs: runs.rows, jobs: jobs.rows }, null, 1));
    }, 60_000);
    const blocking = [
      action("verify", { claim: "long", command: "sleep 30" }),
      action("finish", { summary: "should not get here", evidence: "" }),
    ];
    const victimRun = await submit(nodes[0]!, {
      goal: "long run",
      profile: "Coder",
      model: script(dirs, "long", blocking),
    });
    // Wait until a worker has claimed it and the verify is underway.
    let worker = "";
    for (let i = 0; i < 200 && !worker; i++) {
      const { rows } = await db.pool.query<{ worker: string | null; events: number }>(
        "SELECT worker, events FROM capgate.runs WHERE id = $1",
        [victimRun],
      );
      if (rows[0]?.worker && rows[0].events >= 3) worker = rows[0].worker;
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(worker).not.toBe("");
    const pid = Number(worker.split(":")[1]);
    const victim = workers.find((w) => w.child.pid === pid)!;
    expect(victim).toBeDefined();
    const others = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        submit(nodes[i % 2]!, {
          goal: `after ${i}`,
          profile: "Coder",
          model: script(dirs, `after${i}`, finishing(`after-${i}.txt`)),
        }),
      ),
    );
    victim.child.kill("SIGKILL");
    // Bounded by construction: the victim's sleep died with it, so only the sweeper can end
    // the run, and the test's timeout bounds the wait.
    const lost = await follow(nodes[1]!, token, victimRun);
    expect(lost.ended).toBe(true);
    const end = lost.events.at(-1)!.data;
    expect(end).toMatchObject({ type: "run_ended", outcome: "error", error: "worker lost" });
    expectGapFree(lost.events);
    // Each step ran once: one model request per step number, one run_started.
    const steps = lost.events.filter((e) => e.data.type === "model_request").map((e) => e.data.step);
    expect(new Set(steps).size).toBe(steps.length);
    expect(lost.events.filter((e) => e.data.type === "run_started")).toHaveLength(1);
    // Runs the victim had taken too end as lost; every other run finishes on the remaining workers.
    let finished = 0;
    for (const id of others) {
      const r = await follow(nodes[0]!, token, id);
      const { rows } = await db.pool.query<{ worker: string }>(
        "SELECT worker FROM capgate.runs WHERE id = $1",
        [id],
      );
      const last = r.events.at(-1)?.data;
      if (rows[0]?.worker === worker) expect(last).toMatchObject({ outcome: "error", error: "worker lost" });
      else {
        expect(last?.outcome).toBe("finished");
        finished++;
      }
    }
    expect(finished).toBeGreaterThanOrEqual(3);
    // Never replayed: nothing was appended after run_ended, and no job is left for it.
    await new Promise((r) => setTimeout(r, 1_500));
    const { rows } = await db.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM capgate.run_events WHERE run_id = $1",
      [victimRun],
    );
    expect(Number(rows[0]!.n)).toBe(lost.events.length);
    const jobs = await db.pool.query("SELECT 1 FROM graphile_worker.jobs WHERE key = $1", [victimRun]);
    expect(jobs.rowCount).toBe(0);
    clearTimeout(dump);
  }, 90_000);

  it("a node given an unreachable database fails fast naming the setting", async () => {
    const { spawnCli } = await import("./queue-cluster.js");
    const proc = spawnCli(["worker", "--database", "postgresql://x:pw@127.0.0.1:1/db"], {}, dirs.root);
    const code = await proc.exited;
    expect(code).not.toBe(0);
    expect(proc.output()).toContain("--database");
    expect(proc.output()).not.toContain(":pw@");
  }, 30_000);
});
