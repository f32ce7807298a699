import pg from "pg";
import { connectionError, PostgresError, redactUrl } from "./errors.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";

export interface OpenDatabaseOptions {
  /** `postgresql://user:password@host:port/database` */
  url: string;
  /** Where the URL came from, named in errors (default `--database`). */
  setting?: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** Give up connecting after this long (default 5 s): a wrong URL fails fast. */
  connectTimeoutMs?: number;
  /** Apply migrations (default true); a node that only reads still checks the version. */
  migrate?: boolean;
  /** Also install graphile-worker's schema (default true; the queue needs it). */
  queue?: boolean;
}

export interface Database {
  readonly pool: pg.Pool;
  readonly url: string;
  /** The URL's setting name, for messages. */
  readonly setting: string;
  /** The schema version this database is at. */
  readonly schemaVersion: number;
  /** A connection outside the pool (LISTEN, locks held for a process's life). */
  client(): pg.Client;
  close(): Promise<void>;
}

/** Key of the advisory lock that serialises migrations between nodes ('capg' 'migr'). */
const MIGRATION_LOCK: [number, number] = [0x63617067, 0x6d696772];

/**
 * Connect (failing fast with the setting named), then bring the schema up to date under an
 * advisory lock, so several nodes starting at once migrate exactly once. A database whose
 * schema is newer than this code is refused: an old node must not write to it.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const setting = options.setting ?? "--database";
  const url = options.url;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") throw new Error("scheme");
  } catch {
    throw new PostgresError(
      "invalid_database_url",
      `${setting} must be a URL like postgresql://user:password@host:5432/database; got '${redactUrl(url)}'.`,
      { property: setting },
    );
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const config: pg.PoolConfig = {
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: "capgate",
  };
  const pool = new pg.Pool(config);
  // A dropped idle connection (a restarted server) is replaced on the next query; it must not crash the process.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  let version: number;
  try {
    const client = await pool.connect().catch((error: unknown) => {
      throw connectionError(error, setting, url);
    });
    try {
      version = await migrate(client, options.migrate !== false, url, setting);
    } finally {
      client.release();
    }
    if (options.queue !== false && options.migrate !== false) await installQueue(pool);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return {
    pool,
    url,
    setting,
    schemaVersion: version,
    client: () => new pg.Client({ ...config }),
    close: () => pool.end(),
  };
}

async function migrate(client: pg.PoolClient, apply: boolean, url: string, setting: string): Promise<number> {
  await client.query("SELECT pg_advisory_lock($1, $2)", MIGRATION_LOCK);
  try {
    if (apply) {
      await client.query("CREATE SCHEMA IF NOT EXISTS capgate");
      await client.query(
        "CREATE TABLE IF NOT EXISTS capgate.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
    }
    const exists = await client.query("SELECT to_regclass('capgate.migrations') AS t");
    let current = 0;
    if (exists.rows[0]?.t !== null) {
      const { rows } = await client.query("SELECT coalesce(max(version), 0) AS v FROM capgate.migrations");
      current = Number(rows[0]?.v ?? 0);
    }
    if (current > SCHEMA_VERSION) {
      throw new PostgresError(
        "schema_too_new",
        `The database at ${redactUrl(url)} (${setting}) has capgate schema version ${current}, newer than this node understands (${SCHEMA_VERSION}). Upgrade this node to the capgate version that wrote it before connecting it; it will not touch the database.`,
        { property: setting },
      );
    }
    if (!apply) return current;
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query("INSERT INTO capgate.migrations (version, name) VALUES ($1, $2)", [
          m.version,
          m.name,
        ]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw new PostgresError(
          "migration_failed",
          `capgate migration ${m.version} (${m.name}) failed: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      current = m.version;
    }
    return current;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1, $2)", MIGRATION_LOCK).catch(() => undefined);
  }
}

/** graphile-worker's own schema (it locks its migrations itself). */
async function installQueue(pool: pg.Pool): Promise<void> {
  const { runMigrations } = await import("graphile-worker");
  await runMigrations({ pgPool: pool, logger: await queueLogger() });
}

/** graphile-worker logs to the console by default; capgate keeps stdout for its own output (CAPGATE_DEBUG_QUEUE=1 shows its warnings). */
export async function queueLogger() {
  const { Logger } = await import("graphile-worker");
  return new Logger(() => (level: string, message: string) => {
    if (process.env.CAPGATE_DEBUG_QUEUE && (level === "error" || level === "warning"))
      process.stderr.write(`graphile-worker ${level}: ${message}\n`);
  });
}
