import {
  CapgateError,
  closestMatch,
  describeIssues,
  signatureFromSchema,
  type ToolManifest,
  type ToolRisk,
  truncateMiddle,
  validate,
} from "@capgate/schema";
import { approvalNeeded, requireApproval } from "./approval.js";
import type { CapabilitySet } from "./capability-set.js";
import { isDeferred } from "./deferred.js";
import type { Capability } from "./define.js";
import { InvalidArgumentsError, UnknownToolError } from "./errors.js";
import { LazyAbortController } from "./lazy-abort.js";
import type { ApprovalRequest, PolicyVerdict, ToolContext, ToolResult } from "./types.js";

/** Anything that can say whether a tool's capability is loaded; a Router is one. */
export interface LoadedTools {
  isToolLoaded(tool: string): boolean;
}

/**
 * Makes the environment a policy and a handler see safe for the host programs a tool starts
 * in `workspace`. Node hosts pass @capgate/workspace's `withHostPath` (a PATH with no entry
 * the model can write); the contract itself reads no file system, so it cannot filter PATH.
 */
export type HostEnv = (
  env: Record<string, string | undefined>,
  workspace: string,
) => Record<string, string | undefined>;

/** The context executeTool needs: a ToolContext plus what can be dispatched and what is loaded. */
export interface ExecuteContext extends ToolContext {
  capabilities: CapabilitySet;
  loaded: LoadedTools;
  /** Applied to `env` for every call (see HostEnv); without it the handler sees `env` as given. */
  hostEnv?: HostEnv;
  /**
   * The call's abort side, when the caller keeps it lazy: then `signal` reads
   * `abort.signal` (a getter), and the executor follows `abort` without making the signal
   * unless a policy or the handler reads it.
   */
  abort?: LazyAbortController;
}

/**
 * Run one tool call through the gate: known and loaded → arguments valid against the
 * tool's schema → policy → approval → handler (with timeout and output cap). A deferred
 * capability's handlers are imported after the arguments are found valid, before its policy
 * runs: the checks and their order are those of any capability, and an import that fails
 * is a failure of the call.
 * Rejections (unknown tool, invalid arguments, policy or approval refusal) throw a
 * CapgateError; everything that happens once the handler runs is a ToolResult.
 */
export async function executeTool(toolName: string, args: unknown, ctx: ExecuteContext): Promise<ToolResult> {
  const found = ctx.capabilities.lookup(toolName);
  if (!found) {
    const guess = closestMatch(toolName, ctx.capabilities.toolNames());
    const hint = guess ? ` Did you mean '${guess}'?` : " Use capability_search to find the right tool.";
    throw new UnknownToolError(toolName, `Unknown tool '${toolName}'.${hint}`);
  }
  const capName = found.capability.manifest.name;
  if (!ctx.loaded.isToolLoaded(toolName)) {
    throw new UnknownToolError(
      toolName,
      `Tool '${toolName}' is not loaded: capability '${capName}' is not loaded; call capability_load {"name":"${capName}"} first.`,
      { owner: capName },
    );
  }

  const input = args === undefined ? {} : args;
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new InvalidArgumentsError(`Arguments for ${toolName} must be an object.`, {
      property: "arguments",
    });
  }
  const argObj = input as Record<string, unknown>;
  const { inputSchema } = found.tool;
  const checked = validate(inputSchema, argObj);
  if (!checked.ok) {
    const { property, text } = describeIssues(checked.errors, { root: "arguments" });
    throw new InvalidArgumentsError(
      `Invalid arguments for ${toolName}: ${text} Signature: ${signatureFromSchema(toolName, inputSchema)}.`,
      { property },
    );
  }

  const entry = found.capability;
  let capability: Capability;
  if (isDeferred(entry)) {
    try {
      capability = await entry.load();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return capResult(
        {
          success: false,
          summary: `${toolName} failed: capability '${capName}' could not be loaded: ${message}`,
        },
        ctx.limits.outputBytes,
      );
    }
  } else {
    capability = entry;
  }

  // The call's own abort side: it follows the caller's and the handler's timeout, and its
  // signal is made only if the policy, the approval wait or the handler reads it.
  const own = new LazyAbortController();
  const unlink = follow(ctx, own);
  const clock = new CallClock();
  const toolCtx = toolContext(ctx, own, clock);
  try {
    return await gated(toolName, argObj, ctx, toolCtx, own, capability, found.tool, clock);
  } finally {
    unlink();
  }
}

/** Policy → approval → handler, for a known, loaded tool with valid arguments. */
async function gated(
  toolName: string,
  argObj: Record<string, unknown>,
  ctx: ExecuteContext,
  toolCtx: ToolContext,
  own: LazyAbortController,
  capability: Capability,
  tool: ToolManifest,
  clock: CallClock,
): Promise<ToolResult> {
  const risk: ToolRisk = tool.risk ?? "read";
  const policy = capability.policies.get(toolName);
  let verdict: PolicyVerdict | undefined;
  try {
    verdict = (policy ? await policy(argObj, toolCtx) : undefined) as PolicyVerdict | undefined;
  } catch (error) {
    // A refusal (or a broken policy configuration) is thrown; a path the check found missing
    // (a parent that is a file, say) or a plain error is a failure of this call, reported like one.
    if (CapgateError.isInstance(error) && error.code !== "not_found") throw error;
    return {
      success: false,
      summary: `${toolName} failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }

  const mode = ctx.policy.approval ?? "never";
  const askReason = verdict?.ask;
  if (askReason !== undefined || approvalNeeded(mode, risk)) {
    // Stopped while its policy ran (a script that ended, a run aborted): nobody is asked.
    if (own.aborted) return aborted(toolName, "was not run: the run was aborted");
    const request: ApprovalRequest = {
      tool: toolName,
      capability: capability.manifest.name,
      risk,
      arguments: argObj,
      description: askReason ?? `${toolName} (${risk}) ${oneLine(argObj)}`,
      grantable: askReason === undefined,
    };
    await requireApproval(toolCtx, request, askReason ?? `approval mode '${mode}'`);
  }

  return runHandler(toolName, argObj, ctx, toolCtx, own, capability.handlers.get(toolName)!, clock);
}

/**
 * Run the handler with the call's timeout and output cap; on timeout the call's own
 * abort side aborts, so a handler that reads `ctx.signal` sees it.
 */
function runHandler(
  toolName: string,
  args: Record<string, unknown>,
  ctx: ExecuteContext,
  toolCtx: ToolContext,
  own: LazyAbortController,
  handler: (args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>,
  clock: CallClock,
): Promise<ToolResult> {
  if (own.aborted) return Promise.resolve(aborted(toolName, "was not run: the run was aborted"));
  const timeoutMs = ctx.limits.timeoutMs;
  const settled = new Promise<ToolResult>((resolve, reject) => {
    clock.start(timeoutMs, () => {
      // Settle first so the call reports the timeout, then stop the handler's work.
      resolve({ success: false, summary: `${toolName} timed out after ${timeoutMs} ms and was stopped.` });
      own.abort(new Error("timeout"));
    });
    // A handler that throws before returning its promise rejects here, like one that rejects.
    Promise.resolve(handler(args, toolCtx)).then(resolve, reject);
  });
  return settled.then(
    (result) => {
      clock.stop();
      return capResult(result, ctx.limits.outputBytes);
    },
    (error: unknown) => {
      clock.stop();
      if (
        CapgateError.isInstance(error) &&
        (error.code === "policy_denied" || error.code === "invalid_arguments")
      ) {
        throw error;
      }
      if (ctx.abort ? ctx.abort.aborted : ctx.signal.aborted) return aborted(toolName, "was aborted");
      const message = error instanceof Error ? error.message : String(error);
      return capResult({ success: false, summary: `${toolName} failed: ${message}` }, ctx.limits.outputBytes);
    },
  );
}

/** Abort `child` when the caller's side aborts; returns the unlink. */
function follow(ctx: ExecuteContext, child: LazyAbortController): () => void {
  const parent = ctx.abort;
  if (parent) return parent.onAbort(() => child.abort(parent.reason));
  // A real signal of the caller's (a run's): one listener for the length of the call.
  const signal = ctx.signal;
  // An aborted signal fires no more events: carry its abort over now.
  if (signal.aborted) {
    child.abort(signal.reason);
    return noop;
  }
  const onAbort = () => child.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

function noop(): void {}

function aborted(toolName: string, what: string): ToolResult {
  return { success: false, summary: `${toolName} ${what}.` };
}

/**
 * What the policy and the handler see: the ToolContext fields and nothing of the
 * executor's (the capability set, the loaded set and the caller's abort stay out of
 * their reach), with `signal` made on first read. An own getter, so a copy made with a
 * spread keeps the signal (it costs one object in dictionary mode, ~1 µs, still far
 * less than an AbortSignal). Listed field by field; the `satisfies` fails the build if
 * ToolContext gains a field this does not pass on.
 */
function toolContext(ctx: ExecuteContext, abort: LazyAbortController, clock: CallClock): ToolContext {
  return {
    workspace: ctx.workspace,
    get signal() {
      return abort.signal;
    },
    // Host programs a tool starts are looked up on a PATH with no entry the model can write.
    env: ctx.hostEnv ? ctx.hostEnv(ctx.env, ctx.workspace) : ctx.env,
    profile: ctx.profile,
    limits: ctx.limits,
    policy: ctx.policy,
    approve: ctx.approve,
    services: ctx.services,
    resources: ctx.resources,
    stateDir: ctx.stateDir,
    pauseTimeout: () => clock.pause(),
  } satisfies Record<keyof ToolContext, unknown>;
}

/**
 * A handler's timeout that can stop while the handler waits on a person (a nested call's
 * approval): pauses nest, and the clock runs again with what was left once the last ends.
 */
class CallClock {
  #timer: NodeJS.Timeout | undefined;
  #onExpire: (() => void) | undefined;
  #leftMs = 0;
  #since = 0;
  #pauses = 0;
  #stopped = false;

  start(ms: number, onExpire: () => void): void {
    this.#onExpire = onExpire;
    this.#leftMs = ms;
    if (this.#pauses === 0) this.#run();
  }

  pause(): () => void {
    if (this.#stopped) return noop;
    if (this.#pauses++ === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#leftMs = Math.max(0, this.#leftMs - (Date.now() - this.#since));
    }
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      if (--this.#pauses === 0 && !this.#stopped && this.#onExpire) this.#run();
    };
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #run(): void {
    this.#since = Date.now();
    this.#timer = setTimeout(() => {
      this.#stopped = true;
      this.#onExpire?.();
    }, this.#leftMs);
  }
}

function capResult(result: ToolResult, maxBytes: number): ToolResult {
  if (typeof result?.summary !== "string" || typeof result.success !== "boolean") {
    return {
      success: false,
      summary: "the tool returned a malformed result (expected { success, summary })",
    };
  }
  const cut = truncateMiddle(result.summary, maxBytes);
  if (!cut.truncated) return result;
  return { ...result, summary: cut.text };
}

function oneLine(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
