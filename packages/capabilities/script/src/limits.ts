/** What one script may use. A host picks them with `createScriptCapability({ limits })`. */
export interface ScriptLimits {
  /** Deadline when the call gives no `timeout_ms` (ms of wall time; an approval wait does not count). */
  defaultTimeoutMs: number;
  /** Largest `timeout_ms` a call may ask for; the host's per-call limit (`limits.timeoutMs`) caps it too. */
  maxTimeoutMs: number;
  /**
   * The engine's whole memory (its WebAssembly memory maximum): ~16 MiB of engine code,
   * data and stack, the rest the script's heap — every object, string and pending promise.
   */
  memoryBytes: number;
  /** The engine's own stack, which bounds how deep JavaScript calls may nest. */
  stackBytes: number;
  /** Most tool calls one script may make. */
  maxCalls: number;
  /** Most tool calls in flight at once; more wait their turn. */
  maxConcurrentCalls: number;
  /** Largest return value plus console output given back, in UTF-8 bytes (the host's output cap applies too). */
  outputBytes: number;
  /** Largest value crossing into or out of the script at once (a call's arguments, a tool's result), in bytes. */
  valueBytes: number;
  /** Deepest nesting of a value crossing the boundary (the action parser's limit). */
  valueDepth: number;
  /**
   * Most values (array items and object members, at any depth) in one call's arguments:
   * the host's work on a call grows with the count, not only the bytes.
   */
  valueCount: number;
  /**
   * Most bytes of arguments in the script's calls not yet answered (sent to the host or
   * waiting for a slot); a call past it is refused. Bounds the host's memory per script.
   */
  pendingBytes: number;
  /** Longest a script may live, waiting for approvals included (ms of wall time). */
  maxLifetimeMs: number;
  /** Largest script source, in bytes. */
  sourceBytes: number;
}

export const DEFAULT_SCRIPT_LIMITS: Readonly<ScriptLimits> = Object.freeze({
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 300_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxCalls: 1_000,
  maxConcurrentCalls: 8,
  outputBytes: 64 * 1024,
  valueBytes: 8 * 1024 * 1024,
  valueDepth: 64,
  valueCount: 100_000,
  pendingBytes: 32 * 1024 * 1024,
  maxLifetimeMs: 60 * 60 * 1000,
  sourceBytes: 256 * 1024,
});
