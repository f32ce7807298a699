// Every process a run starts is gone once the run has ended — in the CLI, in the server (which
// goes on running) and on a queue worker (which takes the next run) — and nothing a configured
// MCP server starts outlives capgate, also after `kill -9`. Each started process carries a
// unique argument and is looked for in the host's process table, whatever it did to get away
// (setsid, a double fork). Real processes: the built CLI, `capgate serve`, `capgate worker`
// on a real PostgreSQL.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "@capgate/test-postgres";
import { leaveBehind, needs, processesWith, uniqueSleep } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiNode,
  type Dirs,
  follow,
  makeDirs,
  type Proc,
  script,
  spawnCli,
  startApiNode,
  startWorkerNode,
} from "./queue-cluster.js";
import { REPO } from "./support.js";

const FIXTURES = join(REPO, "packages", "mcp-client", "test", "fixtures");
const token = randomBytes(24).toString("hex");
const action = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

/**
 * Wait for a state of the process table, polled. Bounded so a leak fails with a message,
 * generously: on a loaded machine starting the CLI alone can take tens of seconds.
 */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** What a test may take on a loaded machine (several CLI starts, a run, a server). */
const SLOW = 300_000;

/**
 * A run that starts a command leaving processes behind in every form (shell.start), waits
 * until they all run (a file the command writes once they do), then ends as impossible.
 */
function leavingRun(marker: string): unknown[] {
  return [
    action("capability_call", {
      tool: "shell.start",
      arguments: { command: `${leaveBehind(marker)} && touch started-${marker}; wait` },
    }),
    action("verify", {
      claim: "the server runs",
      command: `until [ -f started-${marker} ]; do sleep 0.05; done`,
      timeout_ms: 60_000,
    }),
    action("mark_impossible", { reason: "stopping with the server still running" }),
  ];
}

/** Start a run on `node`, follow it to its end, and return its outcome. */
async function runOn(node: ApiNode, model: string): Promise<unknown> {
  const response = await node.api("/runs", { goal: "start a server", profile: "Coder", model });
  const { id } = (await response.json()) as { id: string };
  expect(response.status).toBe(202);
  const { events, ended } = await follow(node, token, id);
  expect(ended).toBe(true);
  return events.at(-1)?.data.outcome;
}

const bwrap = needs(["bwrap"]);

describe("a run's processes end with the run", () => {
  let dirs: Dirs;
  beforeAll(() => {
    dirs = makeDirs();
  });
  afterAll(() => dirs?.cleanup());

  it(
    "capgate run: gone when the run has ended",
    async () => {
      const m = uniqueSleep();
      const proc = spawnCli(
        [
          "run",
          "start a server",
          "--profile",
          "Coder",
          "--model",
          script(dirs, "cli", leavingRun(m)),
          "--workspace",
          dirs.workspace,
        ],
        { CAPGATE_HOME: join(dirs.home, "cli") },
        dirs.root,
      );
      expect(await proc.exited, proc.output()).toBe(3);
      expect(proc.output()).toContain("stopping with the server still running");
      expect(processesWith(m)).toEqual([]);
    },
    SLOW,
  );

  it(
    "capgate serve: gone when the run has ended, while the server goes on",
    async () => {
      const m = uniqueSleep();
      const proc = spawnCli(
        ["serve", "--port", "0", "--workspace", dirs.workspace],
        {
          CAPGATE_HOME: join(dirs.home, "serve"),
          CAPGATE_TOKEN: token,
          CAPGATE_SCRIPTED_MODELS_DIR: dirs.scratch,
        },
        dirs.root,
      );
      try {
        const url = (await proc.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/, SLOW))[1]!;
        const node: ApiNode = {
          url,
          proc,
          api: (path, body) =>
            fetch(`${url}${path}`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
              body: JSON.stringify(body),
            }),
        };
        expect(await runOn(node, script(dirs, "serve", leavingRun(m)))).toBe("impossible");
        expect(processesWith(m)).toEqual([]);
        expect(proc.child.exitCode).toBeNull();
      } finally {
        proc.child.kill("SIGTERM");
        await proc.exited;
      }
    },
    SLOW,
  );
});

describe.skipIf(bwrap.skip)(`a configured MCP server's processes end with capgate${bwrap.note}`, () => {
  let dirs: Dirs;
  beforeAll(() => {
    dirs = makeDirs();
  });
  afterAll(() => dirs?.cleanup());

  /** `capgate call TOOL` with a config whose `daemon` server leaves processes marked `m` behind. */
  function call(tool: string, m: string, name: string): Proc {
    const config = join(dirs.root, `${name}.config.json`);
    const server = { command: process.execPath, args: [join(FIXTURES, "daemon-server.mjs"), m] };
    writeFileSync(config, JSON.stringify({ mcpServers: { daemon: server } }));
    return spawnCli(
      ["--config", config, "call", tool, "{}", "--workspace", dirs.workspace],
      { CAPGATE_HOME: join(dirs.home, name) },
      dirs.root,
    );
  }

  it(
    "when capgate exits",
    async () => {
      const m = uniqueSleep();
      const proc = call("daemon/ping", m, "exits");
      expect(await proc.exited, proc.output()).toBe(0);
      expect(proc.output()).toContain("pong");
      await until(() => processesWith(m).length === 0, "the server's processes to end");
    },
    SLOW,
  );

  it(
    "when capgate is killed with SIGKILL",
    async () => {
      const m = uniqueSleep();
      const proc = call("daemon/hang", m, "killed");
      await until(() => processesWith(m).length === 3, "the server's processes to start");
      proc.child.kill("SIGKILL");
      await proc.exited;
      await until(() => processesWith(m).length === 0, "the server's processes to end");
    },
    SLOW,
  );
});

const postgres = needs(["postgres"]);

describe.skipIf(postgres.skip)(`a worker's run's processes end with the run${postgres.note}`, () => {
  let cluster: TestCluster;
  let database: string;
  let dirs: Dirs;
  let node: ApiNode;
  let worker: Proc;

  beforeAll(async () => {
    cluster = await startTestCluster();
    database = await cluster.createDatabase("run_processes");
    dirs = makeDirs();
    [worker, node] = await Promise.all([
      startWorkerNode(dirs, database, "w", 1),
      startApiNode(dirs, database, token, "a"),
    ]);
  }, 180_000);

  afterAll(async () => {
    for (const p of [worker, node?.proc]) p?.child.kill("SIGTERM");
    await Promise.all([worker?.exited, node?.proc.exited]);
    await cluster?.destroy();
    dirs?.cleanup();
  }, 180_000);

  it(
    "capgate worker: gone when the run has ended, and again for the next run on the same worker",
    async () => {
      for (const name of ["first", "second"]) {
        const m = uniqueSleep();
        expect(await runOn(node, script(dirs, name, leavingRun(m)))).toBe("impossible");
        expect(processesWith(m)).toEqual([]);
      }
      expect(worker.child.exitCode).toBeNull();
    },
    SLOW,
  );

  /** Submit a run that starts the processes, then blocks; resolves once all three run. */
  async function blockedRun(name: string, m: string): Promise<string> {
    const replies = [
      ...leavingRun(m).slice(0, 2),
      action("verify", { claim: "blocks", command: "sleep 600", timeout_ms: 700_000 }),
      action("mark_impossible", { reason: "never reached" }),
    ];
    const response = await node.api("/runs", {
      goal: "start a server",
      profile: "Coder",
      model: script(dirs, name, replies),
    });
    const { id } = (await response.json()) as { id: string };
    await until(() => processesWith(m).length === 3, "the run's processes to start");
    return id;
  }

  it(
    "capgate worker stopped with SIGTERM mid-run: its run is aborted and its processes are gone",
    async () => {
      const m = uniqueSleep();
      const id = await blockedRun("sigterm", m);
      worker.child.kill("SIGTERM");
      await worker.exited;
      expect(processesWith(m)).toEqual([]);
      const { events } = await follow(node, token, id);
      expect(events.at(-1)?.data, `${JSON.stringify(events.at(-1)?.data)}\n${worker.output()}`).toMatchObject(
        {
          type: "run_ended",
          outcome: "aborted",
        },
      );
    },
    SLOW,
  );

  it(
    "capgate worker killed with SIGKILL mid-run: its run's processes die with it",
    async () => {
      worker = await startWorkerNode(dirs, database, "w2", 1);
      const m = uniqueSleep();
      await blockedRun("sigkill", m);
      worker.child.kill("SIGKILL");
      await worker.exited;
      await until(() => processesWith(m).length === 0, "the run's processes to end");
    },
    SLOW,
  );
});
