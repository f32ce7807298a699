import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "./index.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-queue-mode-")));
const base = { workspace: root, stateDir: join(root, "state"), port: 0 };

afterAll(() => rmSync(root, { recursive: true, force: true }));

// The queue itself runs for real in tests/e2e (PostgreSQL); these are the choices made before any database is touched.
describe("startServer runs: queue — settings", () => {
  it("without a database, runs stay local (the embedded default) and no driver is needed", async () => {
    const server = await startServer({ ...base, env: {} });
    try {
      expect(server.runs).toBe("local");
    } finally {
      await server.close();
    }
  });

  it('runs: "queue" without any database URL is refused, saying where one can come from', async () => {
    await expect(startServer({ ...base, env: {}, runs: "queue" })).rejects.toMatchObject({
      code: "no_database",
      property: "database",
    });
  });

  it("an unreachable database fails fast, naming the setting it came from, password hidden", async () => {
    const fromEnv = await startServer({
      ...base,
      env: { CAPGATE_DATABASE_URL: "postgresql://capgate:hunter2@127.0.0.1:1/capgate" },
    }).catch((e: unknown) => e);
    expect(fromEnv).toMatchObject({ code: "database_unreachable", property: "CAPGATE_DATABASE_URL" });
    expect((fromEnv as Error).message).not.toContain("hunter2");
    const fromOption = await startServer({
      ...base,
      env: {},
      database: "postgresql://x@127.0.0.1:1/db",
    }).catch((e: unknown) => e);
    expect((fromOption as Error).message).toContain("--database");
    const fromConfig = await startServer({ ...base, env: {}, config: { database: "mysql://nope" } }).catch(
      (e: unknown) => e,
    );
    expect(fromConfig).toMatchObject({ code: "invalid_database_url", property: "database (config file)" });
  });
});
