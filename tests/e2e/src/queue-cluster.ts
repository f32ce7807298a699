import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { shellForTests } from "@capgate/test-system-parts";

const require = createRequire(import.meta.url);
export const BIN = join(dirname(require.resolve("capgate/package.json")), "dist", "bin.js");

export interface Proc {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first stdout match. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

export function spawnCli(args: string[], env: Record<string, string>, cwd: string): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    out += chunk.toString("utf8");
    for (const w of waiters.splice(0)) w();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    // Generous: on a loaded machine a node's start alone can take tens of seconds.
    waitFor(pattern, ms = 150_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern} in:\n${out}`)), ms);
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          } else if (child.exitCode !== null) {
            clearTimeout(timer);
            reject(new Error(`process exited (${child.exitCode}) before ${pattern}:\n${out}`));
          } else waiters.push(check);
        };
        child.once("exit", check);
        check();
      });
    },
  };
}

export interface ApiNode {
  url: string;
  proc: Proc;
  api(path: string, body?: unknown): Promise<Response>;
}

export interface Dirs {
  root: string;
  workspace: string;
  home: string;
  scratch: string;
  cleanup(): void;
}

/** A git workspace with one commit, a state dir and a scratch dir for scripted models. */
export function makeDirs(): Dirs {
  const root = mkdtempSync(join(tmpdir(), "capgate-queue-e2e-"));
  const workspace = join(root, "workspace");
  const home = join(root, "home");
  const scratch = join(root, "scratch");
  for (const d of [workspace, home, scratch]) mkdirSync(d);
  writeFileSync(join(workspace, "README.md"), "# queued\n");
  // The nodes run from root: without a working bubblewrap (and not required) their commands run unsandboxed.
  const shell = shellForTests();
  if (shell.sandbox) writeFileSync(join(root, "capgate.config.json"), JSON.stringify({ shell }));
  const git = (args: string[]) =>
    execFileSync("git", args, {
      cwd: workspace,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@t",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@t",
      },
    });
  git(["init", "-q"]);
  git(["add", "-A"]);
  git(["commit", "-q", "-m", "init"]);
  return { root, workspace, home, scratch, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function script(dirs: Dirs, name: string, replies: unknown[]): string {
  const file = join(dirs.scratch, `${name}.json`);
  writeFileSync(file, JSON.stringify(replies.map((r) => (typeof r === "string" ? r : JSON.stringify(r)))));
  return `scripted:${file}`;
}

export async function startApiNode(
  dirs: Dirs,
  database: string,
  token: string,
  name: string,
): Promise<ApiNode> {
  const proc = spawnCli(
    ["serve", "--port", "0", "--database", database, "--workspace", dirs.workspace],
    { CAPGATE_HOME: join(dirs.home, name), CAPGATE_TOKEN: token, CAPGATE_SCRIPTED_MODELS_DIR: dirs.scratch },
    dirs.root,
  );
  const m = await proc.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const url = m[1]!;
  return {
    url,
    proc,
    api: (path, body) =>
      fetch(`${url}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
  };
}

export async function startWorkerNode(
  dirs: Dirs,
  database: string,
  name: string,
  concurrency = 2,
): Promise<Proc> {
  const proc = spawnCli(
    [
      "worker",
      "--database",
      database,
      "--concurrency",
      String(concurrency),
      "--workspace",
      dirs.workspace,
      "--work-dir",
      join(dirs.root, `work-${name}`),
    ],
    { CAPGATE_HOME: join(dirs.home, name) },
    dirs.root,
  );
  await proc.waitFor(/capgate worker \S+/);
  return proc;
}

export interface SseEvent {
  id: number;
  data: { type: string; seq: number; runId: string; [k: string]: unknown };
}

/**
 * Follow a run's SSE stream; resolves when the server ends it. `onEvent` may return
 * "stop" to drop the connection (as a client whose node died would see it).
 */
export async function follow(
  node: { url: string },
  token: string,
  runId: string,
  options: { lastEventId?: number; onEvent?: (e: SseEvent) => "stop" | undefined; signal?: AbortSignal } = {},
): Promise<{ events: SseEvent[]; ended: boolean }> {
  const controller = new AbortController();
  options.signal?.addEventListener("abort", () => controller.abort());
  const events: SseEvent[] = [];
  let ended = false;
  try {
    const response = await fetch(`${node.url}/runs/${runId}/events`, {
      headers: {
        authorization: `Bearer ${token}`,
        ...(options.lastEventId !== undefined ? { "last-event-id": String(options.lastEventId) } : {}),
      },
      signal: controller.signal,
    });
    if (!response.ok || !response.body) throw new Error(`SSE ${response.status}: ${await response.text()}`);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        cut = buffer.indexOf("\n\n");
        const id = block.match(/^id: (\d+)$/m);
        const data = block.match(/^data: (.*)$/m);
        if (!id || !data) continue;
        const event = { id: Number(id[1]), data: JSON.parse(data[1]!) } as SseEvent;
        events.push(event);
        if (event.data.type === "run_ended") ended = true;
        if (options.onEvent?.(event) === "stop") {
          controller.abort();
          return { events, ended };
        }
      }
    }
  } catch (error) {
    if ((error as Error).name !== "AbortError" && !(error as Error).message.includes("terminated"))
      throw error;
  }
  return { events, ended };
}
