import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { approvingMcpCaller, type LoopEnvironment } from "@capgate/loop";
import { executeCapabilityStep } from "@capgate/mcp-client";
import { Router } from "@capgate/router";
import { type CapabilityManifest, CapgateError, closestMatch, type ToolRisk } from "@capgate/schema";
import {
  type ApprovalHook,
  type CapabilitySet,
  executeTool,
  type PolicyConfig,
  type ToolContext,
  type ToolResult,
} from "@capgate/tools";

export interface CallToolOptions {
  /** Profile whose rights apply (default Orchestrator). */
  profile?: string;
  /** Overrides the approval mode for this call. */
  approval?: PolicyConfig["approval"];
  /** Answers approval requests for this call (CLI y/n prompt). */
  approve?: ApprovalHook;
  signal?: AbortSignal;
  /** Another workspace for this call. */
  workspace?: string;
  /** Route unknown names to the configured MCP servers (default true). */
  mcp?: boolean;
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
  // The host's loop approver expects ids to answer by; a direct call gets its own.
  const approve: ApprovalHook | undefined =
    options.approve ??
    (loopApprove
      ? (request, signal) => loopApprove({ ...request, approvalId: randomUUID(), runId: "direct" }, signal)
      : undefined);
  const ctx: ToolContext = {
    workspace,
    signal: options.signal ?? new AbortController().signal,
    env: env.env,
    profile: { name: profile.name, maySpawnWorkers: profile.maySpawnWorkers },
    limits: env.limits,
    policy: { ...env.policy, ...(options.approval ? { approval: options.approval } : {}) },
    ...(approve ? { approve } : {}),
    services: {
      ...(env.memory ? { memory: env.memory } : {}),
      ...(env.mcp ? { mcp: env.mcp } : {}),
      ...(env.browserExecutable ? { browserExecutable: env.browserExecutable } : {}),
    },
    resources: env.resources,
    stateDir: env.stateDir,
  };
  const riskOf = (qualified: string): ToolRisk => env.registry.tool(qualified)?.risk ?? "exec";

  const mcp = options.mcp === false || !env.mcp ? undefined : approvingMcpCaller(env.mcp, ctx, riskOf);
  const outcome = await executeCapabilityStep(
    { tool, arguments: args },
    {
      native: () => executeTool(tool, args, { ...ctx, capabilities: env.capabilities, loaded: router }),
      mcp,
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  return { via: outcome.via, ...(outcome.server ? { server: outcome.server } : {}), result: outcome.result };
}

const EMPTY_ROUTER = new Router();
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
