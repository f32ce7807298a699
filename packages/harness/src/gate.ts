import { EventEmitterForRun, type LoopEnvironment, newRunId, Session } from "@capgate/loop";
import type {
  GateCallExtra,
  GateHandler,
  GatePrompts,
  GateResources,
  GateToolName,
  McpPoolScope,
  McpScopeOptions,
} from "@capgate/mcp-client";
import { CapgateError, closestMatch } from "@capgate/schema";
import { createHostResources } from "@capgate/tools";
import { gatePrompts, gateResources, LinkMemory } from "./gate-resources.js";

export interface GateSessionOptions {
  /** Profile whose rights and preloads apply (default Orchestrator). */
  profile?: string;
  /** Capabilities loaded from the start, so a client that never keeps a session (one call per connection) can call their tools. */
  preload?: string[];
  /**
   * `per-session`: this session opens its own upstream session of every MCP server not
   * marked `"share": true`, closed with it (the server app's `/mcp`, where sessions are
   * different clients). Default `shared`: the harness pool's sessions (`capgate mcp serve`,
   * one client).
   */
  upstream?: "shared" | "per-session";
  /** With `per-session`: who answers its upstream sessions' elicitation and sampling requests. */
  upstreamRequests?: McpScopeOptions;
}

export interface GateSession {
  readonly runId: string;
  /** The four gate tools' implementations, for createGateServer from @capgate/mcp-client. */
  readonly handlers: Record<GateToolName, GateHandler>;
  /** Resources its tools returned links to (resources/read of the gate server), when MCP servers are configured. */
  readonly resources?: GateResources;
  /** The MCP servers' prompts as `<server>/<prompt>`, when MCP servers are configured. */
  readonly prompts?: GatePrompts;
  /** Capabilities loaded in this session. */
  loaded(): string[];
  /** Load the preloaded capabilities now (otherwise done on the first call). */
  preload(): Promise<void>;
  /** End the session: what its calls started (background processes, a browser, ad-hoc MCP servers) is stopped. */
  close(): Promise<void>;
}

/**
 * One gate session for an MCP client: its own router (capabilities it loaded stay
 * loaded), the same executor, policies and MCP fallthrough as the chat loop, and a
 * trace of every call under the state dir.
 */
export function createGateSession(
  env: LoopEnvironment,
  workspace: string,
  options: GateSessionOptions = {},
): GateSession {
  const profile = gateProfile(env, options);
  const runId = newRunId();
  const emitter = new EventEmitterForRun(runId, (e) => env.store.append(e), {
    flush: () => env.store.flush(runId),
  });
  const lifetime = new AbortController();
  // The session's own background processes, browser and ad-hoc MCP servers: closed by close().
  const resources = createHostResources();
  const scope: McpPoolScope | undefined =
    options.upstream === "per-session" && env.mcp ? env.mcp.scope(options.upstreamRequests ?? {}) : undefined;
  const features = scope ?? env.mcp;
  const links = new LinkMemory();
  const session = new Session({
    env,
    emitter,
    workspace,
    signal: lifetime.signal,
    mcp: true,
    verifyGate: "after-change",
    resources,
    ...(scope ? { mcpCaller: scope } : {}),
  });
  emitter.emit({
    type: "run_started",
    goal: "(MCP gate session)",
    profile: profile.name,
    model: "mcp-client",
    workspace,
    maxSteps: 0,
    mcp: true,
    kind: "chat",
  });
  session.applyProfile(profile);
  let step = 0;
  // Loaded on the first call, when MCP servers' tool lists (mcp:<server> preloads) are indexed.
  let preloading: Promise<unknown> | undefined;
  const preload = () =>
    (preloading ??= Promise.all(
      (options.preload ?? []).map((name) =>
        session.dispatch({ name: "capability_load", arguments: { name } }, ++step),
      ),
    ));
  let closed = false;
  // Calls in progress: run_ended waits for them, so none of their events comes after it.
  const inflight = new Set<Promise<unknown>>();
  const dispatch = (name: GateToolName, args: Record<string, unknown>, extra?: GateCallExtra) => {
    if (closed) throw new CapgateError("session_closed", "This gate session is closed; open a new one.");
    const call = preload().then(() =>
      session.dispatch({ name, arguments: normalise(name, args) }, ++step, {
        ...(extra?.signal ? { signal: extra.signal } : {}),
        ...(extra?.onProgress ? { onProgress: extra.onProgress } : {}),
      }),
    );
    const settled: Promise<unknown> = call.then(
      () => inflight.delete(settled),
      () => inflight.delete(settled),
    );
    inflight.add(settled);
    return call;
  };
  const run = (name: GateToolName) => async (args: Record<string, unknown>, extra?: GateCallExtra) => {
    const outcome = await dispatch(name, args, extra);
    // Links to an upstream server's resources can be read through the gate (resources/read).
    if (outcome.server && outcome.content) links.remember(outcome.server, outcome.content);
    // Content blocks and structuredContent go to the client unflattened (the gate server sends them as they are).
    return {
      success: outcome.success,
      summary: outcome.result,
      ...(outcome.content ? { content: outcome.content } : {}),
      ...(outcome.structuredContent !== undefined ? { structuredContent: outcome.structuredContent } : {}),
      ...(outcome.warnings ? { warnings: outcome.warnings } : {}),
    };
  };
  return {
    runId,
    handlers: {
      capability_search: run("capability_search"),
      capability_load: run("capability_load"),
      capability_call: run("capability_call"),
      memory_search: run("memory_search"),
    },
    ...(features
      ? {
          resources: gateResources(features, links),
          prompts: gatePrompts(features, () => env.mcp?.serverNames() ?? []),
        }
      : {}),
    loaded: () => session.router.loaded(),
    preload: () => preload().then(() => undefined),
    async close() {
      if (closed) return;
      closed = true;
      lifetime.abort();
      // Processes the calls started go first (a call waiting on one then returns), then the
      // calls in progress settle, so none of their events comes after run_ended.
      await resources.closeAll().catch(() => undefined);
      await Promise.allSettled([...inflight]);
      await session.close();
      // This session's own upstream sessions (per-session mode) end with it.
      await scope?.close().catch(() => undefined);
      emitter.emit({ type: "run_ended", outcome: "finished", steps: step, rejections: 0 });
    },
  };
}

/** capability_call's tool arguments may sit beside `tool` (the protocol's rule); move them into `arguments`. */
function normalise(name: GateToolName, args: Record<string, unknown>): Record<string, unknown> {
  if (name !== "capability_call" || args.arguments !== undefined) return args;
  const { tool, ...rest } = args;
  return Object.keys(rest).length > 0 ? { tool, arguments: rest } : args;
}

/** The profile and preloads of a gate session, checked: an unknown profile or capability is an error naming it. */
function gateProfile(env: LoopEnvironment, options: GateSessionOptions) {
  const name = options.profile ?? "Orchestrator";
  const profile = env.profiles[name];
  if (!profile) {
    const guess = closestMatch(name, Object.keys(env.profiles));
    throw new CapgateError(
      "unknown_profile",
      `Unknown profile '${name}'${guess ? ` (did you mean '${guess}'?)` : ""}. Profiles: ${Object.keys(env.profiles).join(", ")}.`,
      { property: "gate.profile" },
    );
  }
  for (const [i, capability] of (options.preload ?? []).entries()) {
    // mcp:<server> is known once the server's tools are indexed; capability_load reports it then.
    if (env.registry.get(capability) || capability.startsWith("mcp:")) continue;
    const names = env.registry.list().map((m) => m.name);
    const guess = closestMatch(capability, names);
    throw new CapgateError(
      "unknown_capability",
      `Cannot preload '${capability}': no such capability${guess ? ` (did you mean '${guess}'?)` : ""}. Known: ${names.join(", ")}.`,
      { property: `gate.preload[${i}]` },
    );
  }
  return profile;
}
