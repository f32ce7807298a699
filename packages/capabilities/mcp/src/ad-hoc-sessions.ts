import { type AdHocSession, connectAdHoc } from "@capgate/mcp-client/stdio";
import { stableHash } from "@capgate/schema";
import type { ToolContext } from "@capgate/tools";

/** The config's upper bound for a server's timeoutMs (1 hour). */
const MAX_TIMEOUT_MS = 3_600_000;

/**
 * The MCP client's own timeout for one call (and an ad-hoc server's start): a little under
 * the tool call's limit, so the client's timeout — which names the server and sends
 * `notifications/cancelled` — fires before the executor gives up on the handler.
 */
export function mcpTimeoutMs(ctx: Pick<ToolContext, "limits">): number {
  const limit = Math.floor(ctx.limits.timeoutMs);
  // The same margin as shell.run's: min(2.5 s, a fifth of the limit).
  const margin = Math.min(2_500, Math.floor(limit / 5));
  return Math.max(1, Math.min(limit - margin, MAX_TIMEOUT_MS));
}

/** Prefix of the ctx.resources keys holding ad-hoc sessions. */
export const AD_HOC_RESOURCE_PREFIX = "mcp.ad-hoc:";

function definedEnv(env: ToolContext["env"]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (typeof value === "string") out[key] = value;
  return out;
}

/**
 * The session of an ad-hoc server, spawned on first use and kept in the host's resources
 * (keyed by argv, workspace and environment), so list_tools then call — or many calls —
 * talk to one process. The host's `resources.closeAll()` ends it with its process group.
 * A server that crashed is restarted by the next call (never replaying the failed one);
 * a failed start is forgotten, so the next call tries again.
 */
export function adHocSession(ctx: ToolContext, argv: readonly string[]): Promise<AdHocSession> {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error("adHocSession: argv is empty");
  const env = definedEnv(ctx.env);
  const key = `${AD_HOC_RESOURCE_PREFIX}${stableHash({ argv, cwd: ctx.workspace, env })}`;
  return ctx.resources.acquire(
    key,
    () =>
      connectAdHoc({
        command,
        args,
        env,
        cwd: ctx.workspace,
        timeoutMs: mcpTimeoutMs(ctx),
        outputBytes: ctx.limits.outputBytes,
      }),
    (session) => session.close(),
  );
}
