import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellForTests } from "@capgate/test-system-parts";

const here = dirname(fileURLToPath(import.meta.url));
export const SERVE_ENTRY = join(here, "serve-entry.mjs");
export const FAULT_MCP_SERVER = join(here, "fault-mcp-server.mjs");
export const CHROMIUM = process.env.CAPGATE_CHROMIUM ?? "/usr/bin/chromium";

export interface ServerProcess {
  url: string;
  port: number;
  token: string;
  /** $CAPGATE_HOME of the process (traces under runs/). */
  home: string;
  workspace: string;
  /** A scratch directory for scripts and other test files (outside the workspace). */
  scratch: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Send a signal and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Authorised JSON request with fetch. */
  api(
    path: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  /** Write a scripted model (a JSON array of replies) and return its `scripted:<file>` spec. */
  script(replies: unknown[]): string;
  /** Remove the temp directories (after stop). */
  cleanup(): void;
}

export interface StartOptions {
  /** capgate.config.json contents (written to the scratch dir and loaded by the entry). */
  config?:
    | Record<string, unknown>
    | ((dirs: { workspace: string; scratch: string }) => Record<string, unknown>);
  /** startServer options (JSON-serialisable). */
  options?: Record<string, unknown>;
  /** Files to create in the workspace. */
  files?: Record<string, string>;
  env?: Record<string, string>;
}

/** Spawn the built server as a real process on 127.0.0.1:0 with a temp CAPGATE_HOME and workspace. */
export async function startServerProcess(start: StartOptions = {}): Promise<ServerProcess> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-server-test-")));
  const home = join(root, "home");
  const workspace = join(root, "workspace");
  const scratch = join(root, "scratch");
  for (const d of [home, workspace, scratch]) mkdirSync(d, { recursive: true });
  for (const [name, content] of Object.entries(start.files ?? {})) {
    mkdirSync(dirname(join(workspace, name)), { recursive: true });
    writeFileSync(join(workspace, name), content);
  }
  const token = randomBytes(24).toString("base64url");
  // Scripted models written by script() live in scratch: the one directory POST /runs may name.
  const options: Record<string, unknown> = {
    workspace,
    scriptedModelsDir: scratch,
    ...(start.options ?? {}),
  };
  // Commands run in the sandbox where bubblewrap works (or is required), unsandboxed on a machine without it.
  const sandboxOff = shellForTests();
  if (start.config || sandboxOff.sandbox) {
    const given = typeof start.config === "function" ? start.config({ workspace, scratch }) : start.config;
    const config = { ...given, shell: { ...sandboxOff, ...(given?.shell as object | undefined) } };
    const configFile = join(scratch, "capgate.config.json");
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    options.configFile = configFile;
  }
  const child = spawn(process.execPath, [SERVE_ENTRY, JSON.stringify(options)], {
    cwd: scratch,
    env: {
      ...process.env,
      CAPGATE_HOME: home,
      CAPGATE_TOKEN: token,
      CAPGATE_CHROMIUM: CHROMIUM,
      ...(start.env ?? {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const ready = await new Promise<{ url: string; port: number }>((resolve, reject) => {
    // A guard against a hang, not a speed expectation: an exit is reported at once (below), and
    // a busy two-core machine takes tens of seconds to start the server and its harness.
    const timer = setTimeout(() => reject(new Error(`server did not start in 120 s\n${err}`)), 120_000);
    const onData = () => {
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        try {
          resolve(JSON.parse(line) as { url: string; port: number });
        } catch {
          reject(new Error(`unexpected first line: ${line}\n${err}`));
        }
      }
    };
    child.stdout?.on("data", onData);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it was ready\n${err}`));
    });
  });

  const api: ServerProcess["api"] = (path, init = {}) =>
    fetch(`${ready.url}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...(init.headers ?? {}),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });

  let scripts = 0;
  return {
    ...ready,
    token,
    home,
    workspace,
    scratch,
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    api,
    script(replies) {
      const file = join(scratch, `script-${++scripts}.json`);
      writeFileSync(
        file,
        JSON.stringify(replies.map((r) => (typeof r === "string" ? r : JSON.stringify(r)))),
      );
      return `scripted:${file}`;
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** One action as the model would send it. */
export function action(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ name, arguments: args });
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json<T = unknown>(): T;
}

/**
 * A request with full control of the headers (fetch will not send a forged Host), as a
 * DNS-rebinding page's browser would.
 */
export function rawRequest(
  url: string,
  init: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const target = new URL(init.path ?? "/", url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: init.method ?? "GET",
        path: `${target.pathname}${target.search}`,
        headers: init.headers ?? {},
        setHost: !Object.keys(init.headers ?? {}).some((h) => h.toLowerCase() === "host"),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on("error", reject);
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      // A server that answers early and closes may reset a large upload; report what it said when it did.
      reject(error);
    });
    if (init.body !== undefined) req.end(init.body);
    else req.end();
  });
}

/**
 * Send the headers and only the first bytes of a body that claims to be `declaredBytes`
 * long, and wait for the answer: a server that answers must have decided without reading
 * the body (it never arrives).
 */
export function partialRequest(
  url: string,
  init: { path: string; headers: Record<string, string>; declaredBytes: number },
): Promise<RawResponse> {
  const target = new URL(init.path, url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: target.hostname,
      port: target.port,
      method: "POST",
      path: target.pathname,
      headers: { ...init.headers, "content-length": String(init.declaredBytes) },
      setHost: !Object.keys(init.headers).some((h) => h.toLowerCase() === "host"),
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: <T>() => JSON.parse(text) as T,
        });
      });
    });
    req.on("error", reject);
    req.write('{"tool":"fs.read","arguments":{"path":"');
  });
}

export interface SseMessage {
  id?: string;
  data: string;
}

/** Read a text/event-stream body message by message (comments skipped). */
export async function* readSse(response: Response): AsyncGenerator<SseMessage> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) id = line.slice(3).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length > 0) yield { ...(id !== undefined ? { id } : {}), data: data.join("\n") };
      cut = buffer.indexOf("\n\n");
    }
  }
}

export interface StreamedEvent {
  type: string;
  seq: number;
  runId: string;
  [key: string]: unknown;
}

/** Collect a run's events from its SSE stream until `until` says stop (default: the stream ends). */
export async function collectEvents(
  server: Pick<ServerProcess, "api">,
  runId: string,
  options: {
    lastEventId?: number;
    until?: (event: StreamedEvent, all: StreamedEvent[]) => boolean;
    onEvent?: (event: StreamedEvent) => void | Promise<void>;
  } = {},
): Promise<StreamedEvent[]> {
  const controller = new AbortController();
  const response = await server.api(`/runs/${runId}/events`, {
    headers: options.lastEventId !== undefined ? { "last-event-id": String(options.lastEventId) } : {},
  });
  if (response.status !== 200)
    throw new Error(`events answered ${response.status}: ${await response.text()}`);
  const events: StreamedEvent[] = [];
  try {
    for await (const message of readSse(response)) {
      const event = JSON.parse(message.data) as StreamedEvent;
      if (message.id !== String(event.seq)) throw new Error(`id ${message.id} is not seq ${event.seq}`);
      events.push(event);
      await options.onEvent?.(event);
      if (options.until?.(event, events)) break;
    }
  } finally {
    controller.abort();
    await response.body?.cancel().catch(() => undefined);
  }
  return events;
}

/** Poll until `check` returns a value (not a timing assertion: a deadline so a broken build fails instead of hanging). */
export async function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Command lines of live processes containing `marker` (from /proc). */
export function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (cmdline.includes(marker)) found.push(`${pid}: ${cmdline}`);
    } catch {
      // gone already
    }
  }
  return found;
}

/** The stored trace of a run, line by line. */
export function readTrace(home: string, runId: string): StreamedEvent[] {
  return readFileSync(join(home, "runs", `${runId}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as StreamedEvent);
}
