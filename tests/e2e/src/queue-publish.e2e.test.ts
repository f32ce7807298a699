import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
  script,
  startApiNode,
  startWorkerNode,
} from "./queue-cluster.js";

// Issue 17, part 1, end to end: a run on a real worker (`capgate worker`, real PostgreSQL,
// its shell in the sandbox) plants a nested repository whose core.fsmonitor reads the
// worker's state directory and writes outside the workspace; the worker then publishes the
// run. Before the fix the publish ran that program on the host as the worker's user and
// published `sub` as a gitlink.
const postgres = needs(["postgres", "git"]);
const token = randomBytes(24).toString("hex");
const action = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

describe.skipIf(postgres.skip)(
  `a worker publishes a run's checkout and runs nothing of it${postgres.note}`,
  () => {
    let cluster: TestCluster;
    let database: string;
    let db: Database;
    let dirs: Dirs;
    let node: ApiNode;
    let worker: Proc;

    beforeAll(async () => {
      cluster = await startTestCluster();
      database = await cluster.createDatabase("queue_publish");
      dirs = makeDirs();
      // The worker's state directory holds a secret its commands cannot read.
      mkdirSync(join(dirs.home, "w1"), { recursive: true });
      writeFileSync(join(dirs.home, "w1", "secret"), "worker-state-secret\n");
      [worker, node] = await Promise.all([
        startWorkerNode(dirs, database, "w1", 1),
        startApiNode(dirs, database, token, "a"),
      ]);
      db = await openDatabase({ url: database, migrate: false });
    }, 180_000);

    afterAll(async () => {
      for (const p of [worker, node?.proc]) p?.child.kill("SIGTERM");
      await Promise.all([worker?.exited, node?.proc.exited]);
      await db?.close();
      await cluster?.destroy();
      dirs?.cleanup();
    }, 180_000);

    it("the issue's plant: no program runs on the host, the branch carries sub/f and no gitlink, the result names what was stripped", async () => {
      const loot = join(dirs.root, "loot");
      mkdirSync(loot);
      const marker = join(loot, "marker");
      const program = `cat '${join(dirs.home, "w1", "secret")}' > '${marker}'; id >> '${marker}'`;
      const plant = `mkdir sub && cd sub && git init -q && git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x && git config core.fsmonitor "${program}" && echo change > f`;
      const model = script(dirs, "plant", [
        action("capability_call", { tool: "shell.run", arguments: { command: plant } }),
        action("verify", { claim: "sub/f exists", command: "test -f sub/f" }),
        action("finish", { summary: "planted", evidence: "test -f passed" }),
      ]);
      const response = await node.api("/runs", {
        goal: "plant a nested repository",
        profile: "Coder",
        model,
      });
      const { id } = (await response.json()) as { id: string };
      expect(response.status).toBe(202);
      const { events, ended } = await follow(node, token, id);
      expect(ended).toBe(true);
      const shell = events.find((e) => e.data.type === "tool_result");
      expect(events.find((e) => e.data.type === "run_ended")?.data.outcome, JSON.stringify(shell?.data)).toBe(
        "finished",
      );

      expect(existsSync(marker), existsSync(marker) ? readFileSync(marker, "utf8") : "").toBe(false);
      const { rows } = await db.pool.query<{
        result: { kind: string; branch: string; stripped?: unknown; notice?: string };
      }>("SELECT result FROM capgate.runs WHERE id = $1", [id]);
      const result = rows[0]!.result;
      expect(result).toMatchObject({ kind: "branch", stripped: [{ path: "sub/.git", kind: "repository" }] });
      expect(result.notice).toMatch(/nested git repositories \('sub\/\.git'/);
      const git = (...args: string[]) => execFileSync("git", args, { cwd: dirs.workspace, encoding: "utf8" });
      expect(git("show", `${result.branch}:sub/f`)).toBe("change\n");
      expect(git("ls-tree", "-r", result.branch)).not.toMatch(/^160000 /m);
      // GET /runs/:id shows the same result to whoever follows the run.
      const view = (await (await node.api(`/runs/${id}`)).json()) as { result?: { notice?: string } };
      expect(view.result?.notice).toBe(result.notice);
    });
  },
);
