import { executeCapabilityStep } from "@capgate/mcp-client";
import type { ToolManifest, ToolRisk } from "@capgate/schema";
import {
  type ApprovalHook,
  executeTool,
  type LoadedTools,
  type NestedCallOptions,
  PolicyDeniedError,
  type ToolCallService,
  type ToolContext,
  type ToolResult,
} from "@capgate/tools";
import type { LoopEnvironment } from "./deps.js";
import { approvingMcpCaller } from "./mcp-approval.js";

/** How far calls may nest: a top-level call's tools may call tools, theirs may not. */
export const MAX_CALL_DEPTH = 1;

/** What reaches a nested call, and how it ended, for whoever watches (a session's events and budget). */
export interface NestedCallObserver {
  /**
   * Called before each nested call; throw a CapgateError to refuse it (a spent budget).
   * Returns what to call once the call has ended.
   */
  begin(call: {
    tool: string;
    arguments: Record<string, unknown>;
    risk: ToolRisk;
  }): (end: NestedCallEnd) => void;
}

export interface NestedCallEnd {
  result: ToolResult;
  via: "native" | "mcp" | "none";
  server?: string;
  /** The rejection's code when the gate refused the call. */
  rejected?: string;
}

/** Which tools nested calls reach: a session's router, or every registered one for a direct call. */
export interface NestedCallScope extends LoadedTools {
  /** The tools a script can see and call, sorted by name. */
  tools(): ToolManifest[];
}

export interface ToolCallServiceOptions {
  env: LoopEnvironment;
  /** The enclosing call's context: workspace, profile, policy, approver and services. */
  context: ToolContext;
  scope: NestedCallScope;
  /** Fall through to the configured MCP servers, as the enclosing call's loop allows. */
  mcp: boolean;
  riskOf: (tool: string) => ToolRisk;
  observer?: NestedCallObserver;
  /** Nesting level of the calls made through this service (1 for a top-level call's). */
  depth?: number;
}

/**
 * The host service behind script.run: each call takes exactly the path of capability_call —
 * executeTool (known and loaded → schema → policy → approval → handler) and, only on an
 * unknown-tool error and where the loop allows it, the MCP fallthrough with the same
 * approvals — under the enclosing call's context, with the script's own stop signal. One
 * implementation for every host: the loop's sessions (goal, chat, MCP gate, queued runs)
 * and the harness's direct calls (`capgate call`, `/tools/call`) build it from here.
 */
export function createToolCallService(options: ToolCallServiceOptions): ToolCallService {
  const depth = options.depth ?? 1;
  // One question at a time: a script's concurrent calls queue for the operator in the order they ask
  // (a terminal prompt cannot ask two things at once, and a person should not have to).
  const asking = { turn: Promise.resolve() };
  return {
    depth,
    tools: () => options.scope.tools(),
    async call(tool, args, callOptions) {
      if (depth > MAX_CALL_DEPTH)
        throw new PolicyDeniedError(
          `${tool} was not called: a tool called from a script cannot call tools itself (nesting is limited to ${MAX_CALL_DEPTH} level).`,
        );
      const risk = options.riskOf(tool);
      const end = options.observer?.begin({ tool, arguments: args, risk });
      const ctx = nestedContext(options, depth, callOptions, asking);
      try {
        const outcome = await executeCapabilityStep(
          { tool, arguments: args },
          {
            native: () =>
              executeTool(tool, args, {
                ...ctx,
                capabilities: options.env.capabilities,
                loaded: options.scope,
              }),
            mcp:
              options.mcp && options.env.mcp
                ? approvingMcpCaller(options.env.mcp, ctx, options.riskOf)
                : undefined,
            signal: callOptions.signal,
          },
        );
        end?.({
          result: outcome.result,
          via: outcome.via,
          ...(outcome.server ? { server: outcome.server } : {}),
        });
        return outcome.result;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        end?.({
          result: { success: false, summary: error instanceof Error ? error.message : String(error) },
          via: "none",
          rejected: typeof code === "string" ? code : "error",
        });
        throw error;
      }
    },
  };
}

/**
 * The enclosing call's context for one nested call: its own stop signal, an approver that
 * tells the script while a person is being asked (so its clocks stop), and a service one
 * level deeper (which refuses: nesting is bounded).
 */
function nestedContext(
  options: ToolCallServiceOptions,
  depth: number,
  call: NestedCallOptions,
  asking: { turn: Promise<void> },
): ToolContext {
  const base = options.context;
  const approve: ApprovalHook | undefined = base.approve
    ? async (request, signal) => {
        const resume = call.onApprovalWait?.();
        const previous = asking.turn;
        let done: () => void = () => undefined;
        asking.turn = new Promise<void>((resolve) => {
          done = resolve;
        });
        try {
          await previous;
          return await base.approve!(request, signal);
        } finally {
          done();
          resume?.();
        }
      }
    : undefined;
  // Field by field: nothing of the host's own call (its abort side, its executor fields) comes along.
  return {
    workspace: base.workspace,
    signal: call.signal,
    env: base.env,
    profile: base.profile,
    limits: base.limits,
    policy: base.policy,
    ...(approve ? { approve } : {}),
    services: { ...base.services, calls: createToolCallService({ ...options, depth: depth + 1 }) },
    resources: base.resources,
    stateDir: base.stateDir,
  } satisfies Record<Exclude<keyof ToolContext, "approve" | "pauseTimeout">, unknown>;
}
