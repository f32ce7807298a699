import { describePg, useCluster } from "@capgate/test-postgres/vitest";
import { expect, it } from "vitest";
import { openDatabase } from "./database.js";
import { SCHEMA_VERSION } from "./migrations.js";

describePg("openDatabase: migrations and bad URLs", () => {
  const { cluster } = useCluster();

  it("migrates concurrently from three nodes without error, exactly once", async () => {
    const url = await cluster().createDatabase("migrate");
    const nodes = await Promise.all([1, 2, 3].map(() => openDatabase({ url })));
    try {
      for (const db of nodes) expect(db.schemaVersion).toBe(SCHEMA_VERSION);
      const { rows } = await nodes[0]!.pool.query("SELECT version FROM capgate.migrations ORDER BY version");
      expect(rows.map((r) => r.version)).toEqual([...Array(SCHEMA_VERSION).keys()].map((i) => i + 1));
      const jobs = await nodes[0]!.pool.query(
        "SELECT to_regprocedure('graphile_worker.add_job(text,json,text,timestamptz,integer,text,integer,text[],text)') AS f",
      );
      expect(jobs.rows[0].f).not.toBeNull();
      // A second start is a no-op.
      const again = await openDatabase({ url });
      await again.close();
    } finally {
      await Promise.all(nodes.map((db) => db.close()));
    }
  }, 60_000);

  it("refuses a database whose schema is newer, naming both versions and the setting, and changes nothing", async () => {
    const url = await cluster().createDatabase("newer");
    const db = await openDatabase({ url });
    await db.pool.query("INSERT INTO capgate.migrations (version, name) VALUES ($1, 'from the future')", [
      SCHEMA_VERSION + 1,
    ]);
    await db.close();
    const error = await openDatabase({ url, setting: "CAPGATE_DATABASE_URL" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "schema_too_new", property: "CAPGATE_DATABASE_URL" });
    expect((error as Error).message).toContain(`version ${SCHEMA_VERSION + 1}`);
    expect((error as Error).message).toContain(`(${SCHEMA_VERSION})`);
    expect((error as Error).message).toContain("CAPGATE_DATABASE_URL");
  }, 60_000);

  it("fails on an unreachable database, naming the setting and hiding the password", async () => {
    // It does not hang: the test's own timeout bounds it (how fast is not a test's business).
    // A port nothing listens on (the cluster's port + 1 is not ours; 1 is never a PostgreSQL).
    const error = await openDatabase({
      url: "postgresql://capgate:s3cret@127.0.0.1:1/postgres",
      setting: "--database",
      connectTimeoutMs: 2_000,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "database_unreachable", property: "--database" });
    expect((error as Error).message).toContain("--database");
    expect((error as Error).message).not.toContain("s3cret");
  }, 30_000);

  it("names the setting when the database does not exist, and rejects a URL that is not postgresql://", async () => {
    const missing = cluster().url.replace(/\/postgres$/, "/no_such_db");
    const error = await openDatabase({ url: missing, setting: "database (capgate.config.json)" }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "database_rejected", property: "database (capgate.config.json)" });
    expect((error as Error).message).toContain("no_such_db");
    const bad = await openDatabase({ url: "mysql://x@y/z", setting: "--database" }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "invalid_database_url", property: "--database" });
  });
});
