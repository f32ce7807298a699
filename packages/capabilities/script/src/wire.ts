import type { ScriptLimits } from "./limits.js";

/**
 * The messages between the host and the engine's thread (engine-thread.ts). A script runs
 * on its own thread so that the host can always end it: the engine's interrupt check stops
 * a script between operations, but some of the engine's native loops never reach it (an
 * `indexOf` over an array-like of length 2^53 runs in C for hours); the host then ends the
 * thread itself. Only plain data crosses, as before it crossed into the engine: the
 * script's source, a call's tool name and parsed arguments, a reply's JSON text.
 */

/** Why a script did not return a value. */
export type ScriptFailureKind =
  | "syntax"
  | "thrown"
  | "timeout"
  | "memory"
  | "stack"
  | "aborted"
  | "stalled"
  | "result"
  | "busy";

export interface ScriptFailure {
  kind: ScriptFailureKind;
  message: string;
  line?: number;
  column?: number;
  /** The gate's code and property, when the script failed on an uncaught tool error. */
  code?: string;
  property?: string;
  tool?: string;
}

/** Host → thread: run a script (one at a time per thread). */
export interface StartMessage {
  type: "start";
  run: number;
  source: string;
  timeoutMs: number;
  limits: ScriptLimits;
}

/** Host → thread: the reply text of a call the script made. */
export interface ReplyMessage {
  type: "reply";
  run: number;
  call: number;
  text: string;
}

/** Host → thread: the stop flag is set; wake up and end (the flag tells why). */
export interface WakeMessage {
  type: "wake";
  run: number;
}

export type ToEngineThread = StartMessage | ReplyMessage | WakeMessage;

/** One call the script made (the thread has already checked the name, counted it and parsed its arguments). */
export interface ScriptCall {
  call: number;
  tool: string;
  args: Record<string, unknown>;
}

/**
 * Thread → host: the calls the script made since the engine last waited. They are sent when
 * the engine goes idle (or the script ends), as the host saw them when the engine ran on its
 * own thread: a call starts once the script's synchronous code yields, and calls made by a
 * stretch of code that is then stopped are never made.
 */
export interface CallsMessage {
  type: "calls";
  run: number;
  calls: ScriptCall[];
}

/** Thread → host: a console line kept (within the output limit). */
export interface LogMessage {
  type: "log";
  run: number;
  line: string;
}

/** Thread → host: the script has ended; the thread is free for the next one. */
export interface DoneMessage {
  type: "done";
  run: number;
  value?: string;
  failure?: ScriptFailure;
  droppedLogLines: number;
  calls: number;
}

export type FromEngineThread = CallsMessage | LogMessage | DoneMessage;

/** What the thread gets at its start (workerData). */
export interface EngineThreadData {
  /** The engine's compiled WebAssembly module (compiled once in the host, shared by every thread). */
  module: object;
  /** Int32 [STOP_SLOT]: why the host wants the script stopped (STOP_NONE while it may run). */
  control: SharedArrayBuffer;
  /** Float64 [USED_SLOT, SINCE_SLOT]: the engine's running time, read by the host's watchdog. */
  clock: SharedArrayBuffer;
}

export const STOP_SLOT = 0;
export const STOP_NONE = 0;
export const STOP_TIMEOUT = 1;
export const STOP_ABORTED = 2;
export const STOP_LIFETIME = 3;

/** Milliseconds the engine has run the current script (entries that ended). */
export const USED_SLOT = 0;
/** Date.now() when the engine entry now running began, 0 while the engine is idle. */
export const SINCE_SLOT = 1;

export function timeoutFailure(timeoutMs: number): ScriptFailure {
  return {
    kind: "timeout",
    message: `the script ran past its deadline of ${timeoutMs} ms and was stopped`,
  };
}

export function lifetimeFailure(lifetimeMs: number): ScriptFailure {
  return {
    kind: "timeout",
    message: `the script was stopped after ${lifetimeMs} ms in all, the longest a script may live (waiting for approvals included)`,
  };
}

export function abortedFailure(): ScriptFailure {
  return { kind: "aborted", message: "the script was stopped: the run was aborted" };
}
