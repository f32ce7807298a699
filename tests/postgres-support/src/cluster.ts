import { execFile as execFileCb } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const execFile = promisify(execFileCb);

/** The directory holding initdb and pg_ctl from Debian's postgresql packages, newest version first; undefined when none is installed. */
export function findPostgresBin(root = "/usr/lib/postgresql"): string | undefined {
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")) && existsSync(join(root, v, "bin", "pg_ctl")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

export interface TestCluster {
  /** `postgresql://capgate@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** A URL to a fresh, empty database in this cluster (one per test file keeps them apart). */
  createDatabase(name: string): Promise<string>;
  /** Stop the server (fast shutdown: clients are disconnected); `start()` brings it back on the same port. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** Stop it and remove every file. */
  destroy(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a temp dir, the server on a
 * free 127.0.0.1 port (and its socket in the temp dir), trust authentication for the
 * `capgate` superuser, durability off (it is thrown away). PostgreSQL refuses to run as
 * root, so as root the binaries run as the `postgres` OS user.
 */
export async function startTestCluster(options: { bin?: string } = {}): Promise<TestCluster> {
  const bin = options.bin ?? findPostgresBin();
  if (!bin) {
    throw new Error(
      "PostgreSQL server binaries were not found under /usr/lib/postgresql/*/bin (install Debian's `postgresql` package).",
    );
  }
  const root = mkdtempSync(join(tmpdir(), "capgate-pg-"));
  const dataDir = join(root, "data");
  const asRoot = process.getuid?.() === 0;
  const run = async (file: string, args: string[]) => {
    const command = asRoot ? "runuser" : join(bin, file);
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, file), ...args] : args;
    return execFile(command, argv, { cwd: root, timeout: 60_000 });
  };
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    chownSync(root, uid, gid);
  }
  await run("initdb", [
    "-D",
    dataDir,
    "-U",
    "capgate",
    "-A",
    "trust",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]);
  const port = await freePort();
  let running = false;
  const start = async () => {
    await run("pg_ctl", [
      "-D",
      dataDir,
      "-l",
      join(root, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${root} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
      "start",
    ]);
    running = true;
  };
  const stop = async (mode: "fast" | "immediate" = "fast") => {
    if (!running) return;
    await run("pg_ctl", ["-D", dataDir, "-m", mode, "-w", "stop"]);
    running = false;
  };
  try {
    await start();
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const url = `postgresql://capgate@127.0.0.1:${port}/postgres`;
  let counter = 0;
  return {
    url,
    port,
    dataDir,
    async createDatabase(name) {
      const db = `${name.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${++counter}`;
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${db}`);
      } finally {
        await client.end();
      }
      return `postgresql://capgate@127.0.0.1:${port}/${db}`;
    },
    stop,
    start,
    async destroy() {
      await stop("immediate").catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await execFile("id", ["-u", "postgres"]);
  const { stdout: g } = await execFile("id", ["-g", "postgres"]);
  return { uid: Number(stdout.trim()), gid: Number(g.trim()) };
}
