import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { decodeEvent, encodeEvent } from "./event-codec.js";
import { eventAfterEnd, type RunEvent, type RunEventListener } from "./events.js";
import { isValidRunId } from "./run-id.js";
import type { RunStore, RunSummary } from "./run-store-api.js";

export interface ReadTraceResult {
  events: RunEvent[];
  /** Lines that did not parse (a torn last line after a crash is tolerated and reported here). */
  badLines: number[];
}

/**
 * Traces on disk: `<stateDir>/runs/<runId>.jsonl`, one event per line, each appended
 * with a single write as it happens, so a killed process leaves every emitted event
 * behind as valid JSONL. Also an in-process feed so a server can follow live runs.
 */
export class FileRunStore implements RunStore {
  readonly dir: string;
  /** Runs with an open trace file: appended to by this process and not ended. */
  readonly #open = new Map<string, OpenTrace>();
  readonly #listeners = new Map<string, Set<RunEventListener>>();
  readonly #anyListeners = new Set<RunEventListener>();

  constructor(stateDir: string) {
    this.dir = join(stateDir, "runs");
  }

  pathOf(runId: string): string {
    if (!isValidRunId(runId)) throw new CapgateError("invalid_run_id", `'${runId}' is not a valid run id.`);
    return join(this.dir, `${runId}.jsonl`);
  }

  /**
   * Save one binary payload of a run (an image or audio block, a blob resource) as a file
   * under `<stateDir>/runs/<runId>/`, so the JSONL references it instead of carrying it.
   * Returns the path relative to the state dir (`runs/<runId>/<name>`).
   */
  saveAttachment(runId: string, name: string, bytes: Uint8Array): string {
    if (!isValidRunId(runId)) throw new CapgateError("invalid_run_id", `'${runId}' is not a valid run id.`);
    if (!ATTACHMENT_NAME.test(name))
      throw new CapgateError("invalid_attachment", `'${name}' is not a valid attachment name.`);
    const dir = join(this.dir, runId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, name), bytes, { mode: 0o600 });
    return `runs/${runId}/${name}`;
  }

  /**
   * Write one event as a line, synchronously. Refused (`event_after_end`, also a process
   * warning) once the run's trace holds its run_ended — whether this process wrote it or
   * another did. After a write fails, the run's later events are refused with that error
   * (no silent gap), except its run_ended, which is still written, numbered to follow the
   * last stored event, so the trace ends with the run's end.
   */
  append(event: RunEvent): void {
    let trace = this.#open.get(event.runId);
    // Another store (another process) appended since this one last wrote: learn what it wrote.
    if (trace && fstatSync(trace.fd).size !== trace.size) {
      this.#close(event.runId, trace);
      trace = undefined;
    }
    trace ??= this.#openTrace(event.runId);
    if (trace.endSeq !== undefined) throw eventAfterEnd(event.runId, event.type, event.seq, trace.endSeq);
    if (trace.failure && event.type !== "run_ended") throw trace.failure;
    const stored = trace.failure ? ({ ...event, seq: trace.lastSeq + 1 } as RunEvent) : event;
    try {
      // After a failed write the file may end in a torn line: start on a fresh one.
      const line = `${trace.failure ? "\n" : ""}${encodeEvent(stored)}\n`;
      writeSync(trace.fd, line);
      trace.size += Buffer.byteLength(line);
    } catch (error) {
      trace.failure ??= new CapgateError(
        "store_failed",
        `Could not write event ${event.seq} ('${event.type}') of run ${event.runId} to ${this.pathOf(event.runId)}: ${(error as Error).message}`,
        { cause: error },
      );
      if (event.type === "run_ended") this.#close(event.runId, trace);
      throw trace.failure;
    }
    trace.lastSeq = stored.seq;
    if (stored.type === "run_ended") this.#close(event.runId, trace);
    for (const l of this.#listeners.get(event.runId) ?? []) safeCall(l, stored);
    for (const l of this.#anyListeners) safeCall(l, stored);
  }

  /** Open a run's trace for appending, learning from what it holds already where it stands. */
  #openTrace(runId: string): OpenTrace {
    const path = this.pathOf(runId);
    mkdirSync(this.dir, { recursive: true });
    const fd = openSync(path, "a", 0o600);
    const trace: OpenTrace = { fd, lastSeq: 0, size: fstatSync(fd).size };
    if (trace.size > 0) {
      for (const e of readTraceFile(path).events) {
        trace.lastSeq = Math.max(trace.lastSeq, e.seq);
        if (e.type === "run_ended") trace.endSeq ??= e.seq;
      }
    }
    if (trace.endSeq !== undefined) closeSync(fd);
    else this.#open.set(runId, trace);
    return trace;
  }

  #close(runId: string, trace: OpenTrace): void {
    closeSync(trace.fd);
    this.#open.delete(runId);
  }

  /** Written synchronously: resolves at once, or rejects with the write error of the run (of any run, without `runId`). */
  async flush(runId?: string): Promise<void> {
    const failed =
      runId === undefined
        ? [...this.#open.values()].find((t) => t.failure)?.failure
        : this.#open.get(runId)?.failure;
    if (failed) throw failed;
  }

  locate(runId: string): string {
    return this.pathOf(runId);
  }

  async events(runId: string, after = 0): Promise<RunEvent[] | undefined> {
    let text: string;
    try {
      text = await readFile(this.pathOf(runId), "utf8");
    } catch {
      return undefined;
    }
    return parseTrace(text)
      .events.filter((e) => e.seq > after)
      .sort((a, b) => a.seq - b.seq);
  }

  async summary(runId: string): Promise<RunSummary | undefined> {
    const events = await this.events(runId);
    return events ? summarise(events) : undefined;
  }

  async runs(limit = 100): Promise<RunSummary[]> {
    return this.list(limit);
  }

  /** Live events of one run (or of every run with "*"), from now on. */
  subscribe(runId: string | "*", listener: RunEventListener): () => void {
    if (runId === "*") {
      this.#anyListeners.add(listener);
      return () => this.#anyListeners.delete(listener);
    }
    let set = this.#listeners.get(runId);
    if (!set) {
      set = new Set();
      this.#listeners.set(runId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(runId);
    };
  }

  has(runId: string): boolean {
    return isValidRunId(runId) && existsSync(this.pathOf(runId));
  }

  read(runId: string): ReadTraceResult {
    const path = this.pathOf(runId);
    if (!existsSync(path))
      throw new CapgateError("run_not_found", `No trace for run '${runId}' in ${this.dir}.`);
    return readTraceFile(path);
  }

  list(limit = 100): RunSummary[] {
    if (!existsSync(this.dir)) return [];
    const files = readdirSync(this.dir)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => ({ f, mtime: statSync(join(this.dir, f)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime || (a.f < b.f ? 1 : -1))
      .slice(0, limit);
    const out: RunSummary[] = [];
    for (const { f } of files) {
      const { events } = readTraceFile(join(this.dir, f));
      const summary = summarise(events);
      if (summary) out.push(summary);
    }
    return out;
  }

  /** Close any open trace files (their runs did not end; the traces stay valid). */
  close(): void {
    for (const trace of this.#open.values()) closeSync(trace.fd);
    this.#open.clear();
  }
}

interface OpenTrace {
  fd: number;
  /** The highest seq in the file. */
  lastSeq: number;
  /** The file's size after this store's last write (a different size: another process appended). */
  size: number;
  /** The seq of the run's run_ended, once it is in the file. */
  endSeq?: number;
  /** The first write that failed: later events are refused with it, except run_ended. */
  failure?: CapgateError;
}

/** `<step>-<n>.<ext>`: made by the loop, never from a tool's input, so no path can escape the run's directory. */
const ATTACHMENT_NAME = /^[0-9]{1,9}-[0-9]{1,6}\.[a-z0-9]{1,8}$/;

function safeCall(listener: RunEventListener, event: RunEvent): void {
  try {
    listener(event);
  } catch {
    // Subscribers cannot break the run.
  }
}

export function readTraceFile(path: string): ReadTraceResult {
  return parseTrace(readFileSync(path, "utf8"));
}

function parseTrace(text: string): ReadTraceResult {
  const events: RunEvent[] = [];
  const badLines: number[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      events.push(decodeEvent(JSON.parse(line)));
    } catch {
      badLines.push(i + 1);
    }
  });
  return { events, badLines };
}

export function summarise(events: RunEvent[]): RunSummary | undefined {
  const start = events.find((e) => e.type === "run_started");
  if (start?.type !== "run_started") return undefined;
  // The first run_ended is the end every reader saw (a trace written before the invariant was enforced may hold another).
  const end = events.find((e) => e.type === "run_ended");
  const lastProfile = [...events].reverse().find((e) => e.type === "profile_changed");
  return {
    runId: start.runId,
    goal: start.goal,
    profile: lastProfile?.type === "profile_changed" ? lastProfile.to : start.profile,
    kind: start.kind,
    startedAt: start.time,
    ...(start.parentRunId ? { parentRunId: start.parentRunId } : {}),
    ...(end?.type === "run_ended" ? { endedAt: end.time, outcome: end.outcome, steps: end.steps } : {}),
    events: events.length,
  };
}
