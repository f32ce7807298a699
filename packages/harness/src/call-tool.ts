import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { approvingMcpCaller, asDecision, createToolCallService, type LoopEnvironment } from "@capgate/loop";
import {
  type CapabilityStepOptions,
  executeCapabilityStep,
  type McpCaller,
  type McpProgress,
} from "@capgate/mcp-client";
import { Router } from "@capgate/router";
import {
  argumentsHash,
  type CapabilityManifest,
  CapgateError,
  closestMatch,
  type ToolRisk,
} from "@capgate/schema";
import {
  type ApprovalHook,
  type ApprovalRequest,
  type CapabilitySet,
  type ExecuteContext,
  executeTool,
  LazyAbortController,
  type PolicyConfig,
  type ToolContext,
  type ToolResult,
} from "@capgate/tools";
import { withHostPath } from "@capgate/workspace";

export interface CallToolOptions {
  /** Profile whose rights apply (default Orchestrator). */
  profile?: string;
  /** Overrides the approval mode for this call. */
  approval?: PolicyConfig["approval"];
  /** Answers approval requests for this call (CLI y/n prompt). */
  approve?: ApprovalHook;
  signal?: AbortSignal;
  /**
   * Instead of `signal`: the call's abort side, whose AbortSignal is made only if a
   * policy, the handler or an MCP call reads it (the HTTP gateway's per-request stop).
   */
  abort?: LazyAbortController;
  /** Another workspace for this call. */
  workspace?: string;
  /** Progress an MCP server reports while the call runs (`notifications/progress`). */
  onProgress?: (progress: McpProgress) => void;
  /** Route unknown names to the configured MCP servers (default true). */
  mcp?: boolean;
  /** Told about each approval the call asks for and its answer. */
  onApproval?: ApprovalObserver;
}

/** Told about each approval a call asks for and its answer (telemetry's span events). */
export interface ApprovalObserver {
  requested(request: ApprovalRequest): void;
  resolved(answer: { approved: boolean }): void;
}

export interface CallToolOutcome {
  via: "native" | "mcp";
  server?: string;
  result: ToolResult;
}

/**
 * One tool call the operator makes directly (`capgate call`, `POST /tools/call`): the
 * owning capability is loaded for the call, then the same executor, policies and
 * `<server>/<tool>` routing as the model's calls. Rejections throw CapgateError
 * (unknown_tool, invalid_arguments, policy_denied).
 */
export async function callTool(
  env: LoopEnvironment,
  defaultWorkspace: string,
  tool: string,
  args: Record<string, unknown>,
  options: CallToolOptions = {},
  // The trace's observer comes beside the options, not in a copy of them: an options object
  // rebuilt per call with one more member made this function ~3 µs slower per call
  // (measured on the gateway; decisions.md "Spans leave the request thread").
  traced?: ApprovalObserver,
): Promise<CallToolOutcome> {
  const profileName = options.profile ?? "Orchestrator";
  // Own entries only: "__proto__" or "constructor" must be unknown, not Object.prototype.
  const profile = Object.hasOwn(env.profiles, profileName) ? env.profiles[profileName] : undefined;
  if (!profile) {
    const names = Object.keys(env.profiles);
    const guess = closestMatch(profileName, names);
    throw new CapgateError(
      "unknown_profile",
      `Unknown profile '${profileName.slice(0, 100)}'.${guess ? ` Did you mean '${guess}'?` : ""} Profiles: ${names.join(", ")}.`,
      { property: "profile" },
    );
  }
  let workspace = defaultWorkspace;
  if (options.workspace) {
    try {
      workspace = realpathSync(resolve(options.workspace));
    } catch {
      throw new CapgateError("invalid_workspace", `The workspace ${options.workspace} does not exist.`, {
        property: "workspace",
      });
    }
  }
  const owned = env.capabilities.lookup(tool);
  const router = owned ? routerFor(env.capabilities, owned.capability.manifest) : EMPTY_ROUTER;
  const loopApprove = env.approve;
  // The host's loop approver expects ids to answer by; a direct call gets its own. A direct
  // call has no run for a "rest of the run" answer to reach: every call asks.
  const asked: ApprovalHook | undefined =
    options.approve ??
    (loopApprove
      ? async (request, signal) => {
          const loopRequest = {
            ...request,
            approvalId: randomUUID(),
            runId: "direct",
            argumentsHash: await argumentsHash(request.arguments),
          };
          return asDecision(await loopApprove(loopRequest, signal)).approved;
        }
      : undefined);
  const approve = observedApprover(observedApprover(asked, options.onApproval), traced);
  // Without a signal of the caller's, the call's abort side stays lazy too: no AbortSignal
  // is made unless something reads it.
  const ctx = new DirectCallContext(
    workspace,
    env,
    profile,
    // A copy per call: a tool that changed its policy object must not change the next call's.
    options.approval ? { ...env.policy, approval: options.approval } : { ...env.policy },
    approve,
    router,
    options.abort ?? (options.signal ? undefined : new LazyAbortController()),
    options.signal,
  );
  const riskOf = (qualified: string): ToolRisk => env.registry.tool(qualified)?.risk ?? "exec";
  ctx.services.calls = directNestedCalls(env, ctx, riskOf, options.mcp !== false);

  const mcp = options.mcp === false || !env.mcp ? undefined : approvingMcpCaller(env.mcp, ctx, riskOf);
  const outcome = await executeCapabilityStep(
    { tool, arguments: args },
    new StepOptions(
      () => executeTool(tool, args, ctx),
      mcp,
      options.abort,
      options.signal,
      options.onProgress,
    ),
  );
  return { via: outcome.via, ...(outcome.server ? { server: outcome.server } : {}), result: outcome.result };
}

const EMPTY_ROUTER = new Router();

/** `approve` with each request and answer told to `observer` (as it is without one of them). */
function observedApprover(
  approve: ApprovalHook | undefined,
  observer: ApprovalObserver | undefined,
): ApprovalHook | undefined {
  if (!approve || !observer) return approve;
  return async (request, signal) => {
    observer.requested(request);
    let approved = false;
    try {
      approved = await approve(request, signal);
      return approved;
    } finally {
      observer.resolved({ approved });
    }
  };
}

/**
 * Nested calls of a direct call (script.run through `capgate call` or `/tools/call`): each
 * is what the operator could call directly — any registered tool, its capability loaded for
 * the call, with the same profile, approval mode and MCP routing.
 */
function directNestedCalls(
  env: LoopEnvironment,
  ctx: ToolContext,
  riskOf: (tool: string) => ToolRisk,
  mcp: boolean,
): ToolContext["services"]["calls"] {
  return createToolCallService({
    env,
    context: ctx,
    scope: {
      isToolLoaded: (tool) => env.capabilities.lookup(tool) !== undefined,
      tools: () =>
        env.registry
          .list()
          .filter((m) => mcp || !m.name.startsWith("mcp:"))
          .flatMap((m) => m.tools)
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    },
    mcp,
    riskOf,
  });
}

/**
 * A direct call's context, one object built once per call. `signal` is a getter on the
 * prototype (an own getter puts an object in V8's dictionary mode: ~1 KB and ~1 µs each),
 * and with a lazy abort side the executor never reads it; only an MCP call's approval wait
 * does.
 */
class DirectCallContext implements ExecuteContext {
  readonly env: ExecuteContext["env"];
  readonly profile: ToolContext["profile"];
  readonly limits: ToolContext["limits"];
  readonly services: ToolContext["services"];
  readonly resources: ToolContext["resources"];
  readonly stateDir: string;
  readonly capabilities: CapabilitySet;
  // Host programs a tool starts never come from a PATH entry the model can write.
  readonly hostEnv = withHostPath;

  constructor(
    readonly workspace: string,
    environment: LoopEnvironment,
    profile: { name: string; maySpawnWorkers: boolean },
    readonly policy: PolicyConfig,
    readonly approve: ApprovalHook | undefined,
    readonly loaded: Router,
    readonly abort: LazyAbortController | undefined,
    private readonly given: AbortSignal | undefined,
  ) {
    this.env = environment.env;
    this.profile = { name: profile.name, maySpawnWorkers: profile.maySpawnWorkers };
    this.limits = environment.limits;
    this.services = servicesOf(environment);
    this.resources = environment.resources;
    this.stateDir = environment.stateDir;
    this.capabilities = environment.capabilities;
  }

  get signal(): AbortSignal {
    return this.abort ? this.abort.signal : (this.given as AbortSignal);
  }
}

/** executeCapabilityStep's options; the signal is read (and so made) only on the way to an MCP server. */
class StepOptions implements CapabilityStepOptions {
  constructor(
    readonly native: () => Promise<ToolResult>,
    readonly mcp: McpCaller | undefined,
    private readonly abort: LazyAbortController | undefined,
    private readonly given: AbortSignal | undefined,
    readonly onProgress?: ((progress: McpProgress) => void) | undefined,
  ) {}

  get signal(): AbortSignal | undefined {
    return this.abort ? this.abort.signal : this.given;
  }
}

/** The host services of an environment as tools see them (read per call: a host may swap them). */
function servicesOf(env: LoopEnvironment): ToolContext["services"] {
  return {
    ...(env.memory ? { memory: env.memory } : {}),
    ...(env.mcp ? { mcp: env.mcp } : {}),
    ...(env.browserExecutable ? { browserExecutable: env.browserExecutable } : {}),
  };
}

const routers = new WeakMap<CapabilitySet, Map<string, Router>>();

/** A router with just this capability loaded, made once per capability (direct calls are a hot path for the gateway). */
function routerFor(capabilities: CapabilitySet, manifest: CapabilityManifest): Router {
  let byName = routers.get(capabilities);
  if (!byName) {
    byName = new Map();
    routers.set(capabilities, byName);
  }
  let router = byName.get(manifest.name);
  if (!router) {
    router = new Router();
    router.load(manifest);
    byName.set(manifest.name, router);
  }
  return router;
}
