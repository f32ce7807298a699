import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "@capgate/postgres";
import { CapgateError } from "@capgate/schema";
import { startTestCluster, type TestCluster } from "@capgate/test-postgres";
import { needs } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toErrorResponse } from "./http-errors.js";
import { type RunningServer, startServer } from "./index.js";

const postgres = needs(["postgres"]);

describe("run store failures reach a client as a generic error", () => {
  it("a store failure (its message holds the database's words) is a 503 without them", () => {
    const error = new CapgateError(
      "store_failed",
      'Could not store 1 event(s) of run r in postgresql://capgate@db/x: unsupported Unicode escape sequence \\u0000 in "body"',
    );
    const { status, body } = toErrorResponse(error);
    expect(status).toBe(503);
    expect(body.error.code).toBe("store_unavailable");
    expect(JSON.stringify(body)).not.toMatch(/Unicode|postgresql|body/);
  });
});

describe.skipIf(postgres.skip)(
  `POST /runs in queue mode: bad text and database errors${postgres.note}`,
  () => {
    let cluster: TestCluster;
    let server: RunningServer;
    let url: string;
    const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-queue-errors-")));
    const log: string[] = [];

    beforeAll(async () => {
      cluster = await startTestCluster();
      url = await cluster.createDatabase("queue_errors");
      mkdirSync(join(root, "models"));
      writeFileSync(
        join(root, "models", "m.json"),
        JSON.stringify(['{"name":"mark_impossible","arguments":{"reason":"x"}}']),
      );
      server = await startServer({
        workspace: root,
        stateDir: join(root, "state"),
        port: 0,
        env: {},
        runs: "queue",
        database: url,
        scriptedModelsDir: join(root, "models"),
        log: { level: "error", stream: { write: (line: string) => log.push(line) } },
      });
    }, 120_000);
    afterAll(async () => {
      await server?.close();
      await cluster?.destroy();
      rmSync(root, { recursive: true, force: true });
    }, 60_000);

    const post = (body: unknown) =>
      fetch(`${server.url}/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "scripted:m.json", ...(body as object) }),
      });

    it("a goal (or profile) PostgreSQL cannot store is a 400 naming the property, and nothing is queued", async () => {
      const response = await post({ goal: "write x\u0000y" });
      const json = (await response.json()) as { error: { code: string; property?: string; message: string } };
      expect(response.status).toBe(400);
      expect(json.error).toMatchObject({ code: "invalid_request", property: "goal" });
      expect(json.error.message).toContain("U+0000");
      const lone = await post({ goal: "a \uD800 b" });
      expect(lone.status).toBe(400);
      expect(((await lone.json()) as { error: { property: string } }).error.property).toBe("goal");
      const listed = (await (
        await fetch(`${server.url}/runs`, { headers: { authorization: `Bearer ${server.token}` } })
      ).json()) as unknown[];
      expect(listed).toEqual([]);
    });

    it("a database error while queueing is a 503 with a generic message; the detail goes to the server log only", async () => {
      const db = await openDatabase({ url, migrate: false });
      try {
        await db.pool.query(
          "ALTER TABLE capgate.runs ADD CONSTRAINT secret_rule_name CHECK (goal <> 'refused by the database')",
        );
        const response = await post({ goal: "refused by the database" });
        const text = await response.text();
        expect(response.status, text).toBe(503);
        expect(JSON.parse(text)).toMatchObject({ error: { code: "queue_unavailable" } });
        expect(text).not.toMatch(/secret_rule_name|violates|constraint|postgres/i);
        expect(log.join("\n")).toContain("secret_rule_name");
      } finally {
        await db.pool
          .query("ALTER TABLE capgate.runs DROP CONSTRAINT IF EXISTS secret_rule_name")
          .catch(() => undefined);
        await db.close();
      }
    });
  },
);
