import { type ChildProcess, spawn } from "node:child_process";
import { signalGroup, terminateGroup, trackGroup, untrackGroup } from "@capgate/process-group";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { ManagedTransport, TransportHooks } from "../transport.js";
import { LineReader, type OversizedLine } from "./line-reader.js";

let stdioSdk: typeof import("@modelcontextprotocol/sdk/shared/stdio.js") | undefined;

const HEAD_BYTES = 4096;
// A line that states what went wrong: "Error: Cannot find module …", "ModuleNotFoundError: …", "fatal: …".
const ERROR_LINE = /^(?:[A-Za-z]*(?:Error|Exception)\b|error\b|fatal\b|Cannot\b|panic\b)/i;

export interface StdioProcessOptions {
  command: string;
  args?: string[];
  /** The complete environment of the process (see `serverEnv`). */
  env: Record<string, string>;
  cwd?: string;
  /** Name used in messages (default: the command). */
  server?: string;
  /** Largest JSON-RPC message accepted from the server (default 16 MiB); larger lines are dropped. */
  maxMessageBytes?: number;
  /** How much of the server's stderr to keep for error messages (default 4 KiB). */
  stderrTailBytes?: number;
  /** Wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL (default 500 ms each). */
  closeGraceMs?: number;
  hooks?: TransportHooks;
}

export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const POSIX = process.platform !== "win32";

// A response's id sits first (`{"jsonrpc":"2.0","id":7,…`) or last (`…,"id":7}`) in the
// serializations in use; anchoring at either end avoids ids nested inside the result.
const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*,/;
const ID_AT_END = /,\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;

function responseId(line: OversizedLine): string | number | undefined {
  if (/^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"method"\s*:/.test(line.head)) return undefined;
  const match = ID_AT_START.exec(line.head) ?? ID_AT_END.exec(line.tail);
  if (!match?.[1]) return undefined;
  return JSON.parse(match[1]) as string | number;
}

/**
 * MCP stdio client transport for Node: spawns the server without a shell, in its own
 * process group (so closing kills the group, wrappers' children included), drains stderr,
 * drops non-JSON stdout lines instead of failing the session, and drops over-long lines
 * while failing the request they answer at once.
 */
export class StdioProcessTransport implements ManagedTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private closedByClient = false;
  private finished = false;
  private stderrTail = "";
  /** The first 4 KiB of stderr: a crash's cause comes first (Node prints "Cannot find module" before its stack and version). */
  private stderrHead = "";
  private readonly finishedPromise: Promise<void>;
  private resolveFinished!: () => void;
  private readonly reader: LineReader;
  private readonly name: string;

  constructor(private readonly options: StdioProcessOptions) {
    this.name = options.server ?? options.command;
    this.finishedPromise = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    this.reader = new LineReader(
      options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      (line) => this.onLine(line),
      (line) => this.onOversized(line),
    );
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error("StdioProcessTransport already started");
    // The SDK's framing (and zod, which checks each message) load with the first server started.
    stdioSdk ??= await import("@modelcontextprotocol/sdk/shared/stdio.js");
    const child = spawn(this.options.command, this.options.args ?? [], {
      cwd: this.options.cwd,
      env: this.options.env,
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
      // Own process group (setsid): close() and crashes kill the whole group.
      detached: POSIX,
      windowsHide: true,
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => {
        if (POSIX && child.pid !== undefined) trackGroup(child.pid);
        resolve();
      });
      child.once("error", (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined) {
          const why =
            error.code === "ENOENT"
              ? `command '${this.options.command}' not found (not on PATH, or cwd missing)`
              : `could not spawn '${this.options.command}': ${error.message}`;
          this.finish();
          reject(new Error(why, { cause: error }));
        } else this.onerror?.(error);
      });
    });
    child.stdout?.on("data", (chunk: Buffer) => this.reader.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      const max = this.options.stderrTailBytes ?? 4096;
      this.stderrTail = (this.stderrTail + text).slice(-max);
      if (this.stderrHead.length < HEAD_BYTES)
        this.stderrHead = (this.stderrHead + text).slice(0, HEAD_BYTES);
      this.options.hooks?.onStderr?.(text);
    });
    // EPIPE after the server died is reported through exit/close, not as a second error.
    child.stdin?.on("error", () => {});
    child.stdout?.on("error", () => {});
    child.stderr?.on("error", () => {});
    child.once("exit", (code, signal) => {
      this.exit = { code, signal };
      // Normally 'close' follows once stdout drains (so a reply written just before exit is
      // still delivered); a grandchild holding the pipes must not keep the session half-open.
      setTimeout(() => {
        if (this.finished) return;
        child.stdout?.destroy();
        child.stderr?.destroy();
        this.finish();
      }, 250).unref();
      // Leftovers of the group (a crashed wrapper's children) go too.
      if (POSIX && child.pid !== undefined && !this.closedByClient && signalGroup(child.pid, 0))
        void terminateGroup(child.pid, this.options.closeGraceMs ?? 500);
    });
    child.once("close", () => this.finish());
  }

  private onLine(line: Buffer): void {
    const text = line.toString("utf8").replace(/\r$/, "");
    if (text.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = stdioSdk!.deserializeMessage(text);
    } catch {
      this.options.hooks?.onGarbage?.(text.length > 500 ? `${text.slice(0, 500)}…` : text);
      return;
    }
    this.onmessage?.(message);
  }

  private onOversized(line: OversizedLine): void {
    const limit = this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.options.hooks?.onGarbage?.(
      `[dropped a ${line.bytes}-byte line: over the ${limit}-byte message limit]`,
    );
    const id = responseId(line);
    if (id === undefined) return;
    // Fail the request it answers now rather than at its timeout.
    this.onmessage?.({
      jsonrpc: "2.0",
      id,
      error: {
        code: -32000,
        message: `the reply was ${line.bytes} bytes, over the client's ${limit}-byte message limit, and was dropped`,
      },
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.finished || stdin.destroyed || !stdin.writable)
      return Promise.reject(new Error(`MCP server '${this.name}' is not running`));
    return new Promise((resolve) => {
      if (stdin.write(stdioSdk!.serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** How the process went away, with the tail of its stderr, once it has. */
  exitReason(): string | undefined {
    if (!this.exit && !this.finished) return undefined;
    let reason: string;
    if (this.closedByClient) reason = "was stopped by the client";
    else if (!this.exit) reason = "closed its output";
    else if (this.exit.signal) reason = `was killed by ${this.exit.signal}`;
    else reason = `exited with code ${this.exit.code}`;
    const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ").slice(-300);
    // The first line that names an error, when the tail (a stack, a version banner) lost it.
    const cause = this.stderrHead
      .split("\n")
      .map((line) => line.trim())
      .find((line) => ERROR_LINE.test(line));
    const first = cause && !tail.includes(cause) ? `${cause.slice(0, 300)} … ` : "";
    return tail ? `${reason}; stderr: ${first}${tail}` : reason;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.child?.pid !== undefined) untrackGroup(this.child.pid);
    this.resolveFinished();
    this.onclose?.();
  }

  /**
   * MCP stdio shutdown: close stdin, wait `closeGraceMs` for the server to exit, then SIGTERM
   * the whole group, then SIGKILL it. Resolves when the process and its group are gone.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.finished) {
      this.finish();
      return;
    }
    this.closedByClient = true;
    const grace = this.options.closeGraceMs ?? 500;
    child.stdin?.end();
    const exited = this.exit !== undefined || (await waitFor(this.finishedPromise, grace));
    const pid = child.pid;
    if (POSIX && pid !== undefined) {
      if (!exited || signalGroup(pid, 0)) await terminateGroup(pid, grace);
    } else if (!exited) child.kill("SIGKILL");
    await waitFor(this.finishedPromise, grace + 300);
    this.finish();
  }
}

async function waitFor(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = await Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return done;
}
