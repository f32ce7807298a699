// kill -9 of the CLI, or of the server, in the middle of a sandboxed command leaves nothing
// running: bubblewrap runs with --die-with-parent and its own pid namespace, so the whole
// sandbox goes with the host process. Real processes: the built CLI (`node apps/cli/dist/bin.js`).
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { needs } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../apps/cli/dist/bin.js", import.meta.url));
const system = needs(["bwrap"]);
const describeLifetime = (name: string, body: () => void) =>
  describe.skipIf(system.skip || !existsSync(BIN))(name + system.note, body);

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-lifetime-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The command: a heartbeat in the workspace every 50 ms, forever (its pids are the sandbox's, so the file is the witness). */
const HEARTBEAT = "while :; do date +%s%N > beat; sleep 0.05; done";

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Wait for a state (polled). The bound only keeps a broken test from hanging: on a loaded
 * machine starting the CLI alone can take tens of seconds, so it is generous.
 */
async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline) {
    const value = probe();
    if (value !== undefined) return value;
    await pause(25);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Every live process below `pid` (host pids, read from /proc). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z" && fields[0] !== "X") parent.set(Number(name), Number(fields[1]));
    } catch {}
  }
  const out: number[] = [];
  for (const candidate of parent.keys()) {
    for (let p = parent.get(candidate); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === pid) {
        out.push(candidate);
        break;
      }
    }
  }
  return out;
}

function alive(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "");
    } catch {
      return false;
    }
  });
}

function workspace(name: string): { ws: string; state: string } {
  const ws = join(root, name);
  const state = join(root, `${name}-state`);
  mkdirSync(ws);
  mkdirSync(state);
  execFileSync("git", ["init", "-q", ws]);
  return { ws, state };
}

function cli(args: string[], ws: string, state: string): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: ws,
    env: { PATH: process.env.PATH, HOME: root, CAPGATE_HOME: state, LANG: "C.UTF-8" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** kill -9 `host` once the heartbeat runs; then the sandbox's processes must be gone and the heartbeat stopped. */
async function killAndCheck(host: ChildProcess, ws: string): Promise<void> {
  const beat = join(ws, "beat");
  await until("the heartbeat", () => (existsSync(beat) ? true : undefined));
  const tree = descendants(host.pid as number);
  expect(tree.length).toBeGreaterThanOrEqual(3); // bwrap, the namespace's init, bash (and its sleep)
  const exited = new Promise((done) => host.once("exit", done));
  host.kill("SIGKILL");
  await exited;
  await until("the sandbox to die with its parent", () => (alive(tree).length === 0 ? true : undefined));
  await pause(200);
  const last = readFileSync(beat, "utf8");
  await pause(500);
  expect(readFileSync(beat, "utf8")).toBe(last);
}

describeLifetime("a sandboxed command dies with its host", () => {
  it("kill -9 of `capgate call shell.run` mid-command leaves nothing running", async () => {
    const { ws, state } = workspace("cli");
    const host = cli(
      ["call", "shell.run", JSON.stringify({ command: HEARTBEAT, timeout_ms: 100_000 })],
      ws,
      state,
    );
    await killAndCheck(host, ws);
  }, 240_000);

  it("kill -9 of `capgate serve` during POST /tools/call leaves nothing running", async () => {
    const { ws, state } = workspace("serve");
    const token = "t".repeat(40);
    const host = cli(["serve", "--port", "0", "--token", token, "--workspace", ws], ws, state);
    let out = "";
    host.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const url = await until(
      "the server to listen",
      () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1],
    );
    const call = fetch(`${url}/tools/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "shell.run", arguments: { command: HEARTBEAT, timeout_ms: 100_000 } }),
    }).catch(() => undefined); // the server dies under it
    await killAndCheck(host, ws);
    await call;
  }, 240_000);
});

describeLifetime("an interrupted command still gets its after-command steps", () => {
  // A command that assembles a repository at the workspace root, then hangs so the user
  // interrupts it: the CLI exits on the signal, and the exit must still stop the sandbox
  // and disable the repository (the user's next `git status` would run its fsmonitor).
  const ASSEMBLE =
    'git init -q --bare . && git config core.bare false && git config core.worktree "$PWD" && git config core.fsmonitor "touch $PWD-fsmonitor-ran; echo" && touch assembled && sleep 100';
  it.each(["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const)(
    "%s of `capgate call shell.run` stops the command and renames the root HEAD aside",
    async (signal) => {
      const ws = join(root, `signal-${signal}`);
      const state = join(root, `signal-${signal}-state`);
      mkdirSync(ws);
      mkdirSync(state);
      const host = cli(
        ["call", "shell.run", JSON.stringify({ command: ASSEMBLE, timeout_ms: 100_000 })],
        ws,
        state,
      );
      let stderr = "";
      host.stderr?.on("data", (c: Buffer) => {
        stderr += c.toString();
      });
      await until("the layout", () => (existsSync(join(ws, "assembled")) ? true : undefined));
      const tree = descendants(host.pid as number);
      const exited = new Promise<number | null>((done) => host.once("exit", (code) => done(code)));
      host.kill(signal);
      expect(await exited).toBe(128 + { SIGINT: 2, SIGTERM: 15, SIGHUP: 1, SIGQUIT: 3 }[signal]);
      await until("the sandbox to stop", () => (alive(tree).length === 0 ? true : undefined));
      expect(existsSync(join(ws, "HEAD"))).toBe(false);
      expect(readdirSync(ws).some((e) => /^HEAD\.capgate-disabled-[0-9a-f]{12}$/.test(e))).toBe(true);
      expect(stderr).toContain("capgate renamed HEAD to HEAD.capgate-disabled-");
      // The user's git afterwards: the root is no repository any more, so nothing of the model's runs.
      spawnSync("git", ["status"], {
        cwd: ws,
        env: { PATH: process.env.PATH, HOME: root, GIT_CEILING_DIRECTORIES: root },
        stdio: "ignore",
      });
      expect(existsSync(`${ws}-fsmonitor-ran`)).toBe(false);
    },
    240_000,
  );
});

describeLifetime("after a kill -9, the next capgate process does what the killed one could not", () => {
  it("a root repository and a policy file the command created are disabled before the config is read", async () => {
    const ws = join(root, "killed");
    const state = join(root, "killed-state");
    mkdirSync(ws);
    mkdirSync(state);
    const command = `git init -q --bare . && git config core.bare false && git config core.worktree "$PWD" && echo '{"shell":{"sandbox":"off"}}' > capgate.config.json && touch assembled && sleep 100`;
    const host = cli(["call", "shell.run", JSON.stringify({ command, timeout_ms: 100_000 })], ws, state);
    await until("the layout", () => (existsSync(join(ws, "assembled")) ? true : undefined));
    const tree = descendants(host.pid as number);
    const exited = new Promise((done) => host.once("exit", done));
    host.kill("SIGKILL");
    await exited;
    await until("the sandbox to die", () => (alive(tree).length === 0 ? true : undefined));
    // Nothing ran after it: the layout and the model's policy file are still there.
    expect(existsSync(join(ws, "HEAD"))).toBe(true);
    expect(existsSync(join(ws, "capgate.config.json"))).toBe(true);
    const next = spawnSync(process.execPath, [BIN, "call", "fs.list", "{}"], {
      cwd: ws,
      env: { PATH: process.env.PATH, HOME: root, CAPGATE_HOME: state, LANG: "C.UTF-8" },
      encoding: "utf8",
    });
    expect(next.stderr).toContain("After an interrupted command");
    expect(next.stderr).not.toContain("sandbox is off");
    expect(existsSync(join(ws, "HEAD"))).toBe(false);
    expect(existsSync(join(ws, "capgate.config.json"))).toBe(false);
    expect(readdirSync(ws).some((e) => e.startsWith("capgate.config.json.capgate-disabled-"))).toBe(true);
    expect(readdirSync(join(state, "sandboxes"))).toEqual([]);
  }, 240_000);
});

describeLifetime("every frontend loads its config the same guarded way", () => {
  const PLANT = `echo '{"shell":{"sandbox":"off"}}' > capgate.config.json && touch planted && sleep 100`;

  it("kill -9 of `capgate serve` mid-command: the restarted server renames the created config aside before reading it", async () => {
    const { ws, state } = workspace("serve-restart");
    const token = "t".repeat(40);
    const serve = (): { host: ChildProcess; url: Promise<string>; stderr: () => string } => {
      const host = cli(["serve", "--port", "0", "--token", token, "--workspace", ws], ws, state);
      let out = "";
      let err = "";
      host.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
      });
      host.stderr?.on("data", (c: Buffer) => {
        err += c.toString();
      });
      const url = until(
        "the server to listen",
        () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1],
      );
      return { host, url, stderr: () => err };
    };
    const first = serve();
    const url = await first.url;
    const call = fetch(`${url}/tools/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "shell.run", arguments: { command: PLANT, timeout_ms: 100_000 } }),
    }).catch(() => undefined); // the server dies under it
    await until("the planted config", () => (existsSync(join(ws, "planted")) ? true : undefined));
    const tree = descendants(first.host.pid as number);
    const exited = new Promise((done) => first.host.once("exit", done));
    first.host.kill("SIGKILL");
    await exited;
    await call;
    await until("the sandbox to die", () => (alive(tree).length === 0 ? true : undefined));
    expect(existsSync(join(ws, "capgate.config.json"))).toBe(true);
    // The operator's supervisor restarts the server: it must not run with the model's policy.
    const second = serve();
    await second.url;
    second.host.kill("SIGTERM");
    await new Promise((done) => second.host.once("exit", done));
    expect(second.stderr()).toContain("After an interrupted command");
    expect(second.stderr()).not.toContain("sandbox is off");
    expect(existsSync(join(ws, "capgate.config.json"))).toBe(false);
    expect(readdirSync(ws).some((e) => e.startsWith("capgate.config.json.capgate-disabled-"))).toBe(true);
  }, 240_000);

  it("while a command that created the config still runs, `capgate mcp serve` does not obey it", async () => {
    const { ws, state } = workspace("inflight");
    const host = cli(
      ["call", "shell.run", JSON.stringify({ command: PLANT, timeout_ms: 100_000 })],
      ws,
      state,
    );
    try {
      await until("the planted config", () => (existsSync(join(ws, "planted")) ? true : undefined));
      const other = spawnSync(process.execPath, [BIN, "mcp", "serve", "--workspace", ws], {
        cwd: ws,
        input: "",
        env: { PATH: process.env.PATH, HOME: root, CAPGATE_HOME: state, LANG: "C.UTF-8" },
        encoding: "utf8",
      });
      expect(other.status).toBe(0);
      expect(other.stderr).toContain("still runs, so it may be its work; the default config applies");
      expect(other.stderr).not.toContain("sandbox is off");
      // Named explicitly, it is refused instead.
      const named = spawnSync(
        process.execPath,
        [BIN, "--config", "capgate.config.json", "call", "fs.list", "{}"],
        {
          cwd: ws,
          env: { PATH: process.env.PATH, HOME: root, CAPGATE_HOME: state, LANG: "C.UTF-8" },
          encoding: "utf8",
        },
      );
      expect(named.status).toBe(1);
      expect(named.stderr).toContain("it is still running: the file may be its work");
    } finally {
      const exited = new Promise((done) => host.once("exit", done));
      host.kill("SIGINT");
      await exited;
    }
    // The interrupted command's after-command step renamed the file aside.
    expect(existsSync(join(ws, "capgate.config.json"))).toBe(false);
  }, 240_000);
});
