import { basename } from "node:path";
import { type AdHocSession, connectAdHoc } from "@capgate/mcp-client/stdio";
import { stableHash } from "@capgate/schema";
import { killMarkedProcesses, sandboxCommand, type ToolContext } from "@capgate/tools";

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
  const [command, ..._args] = argv;
  if (command === undefined) throw new Error("adHocSession: argv is empty");
  const env = definedEnv(ctx.env);
  const key = `${AD_HOC_RESOURCE_PREFIX}${stableHash({ argv, cwd: ctx.workspace, env })}`;
  return ctx.resources.acquire(
    key,
    async () => {
      // The model chose this program: it runs in the same OS sandbox as shell.run (workspace
      // writable, secrets hidden, no desktop, guarded network), dying with the host.
      const sandboxed = await sandboxCommand(argv, {
        workspace: ctx.workspace,
        cwd: ctx.workspace,
        env,
        stateDir: ctx.stateDir,
        ...(ctx.policy.shell ? { shell: ctx.policy.shell } : {}),
        ...(ctx.policy.web ? { web: ctx.policy.web } : {}),
      });
      let session: AdHocSession;
      try {
        session = await connectAdHoc({
          command: sandboxed.file,
          args: sandboxed.args,
          env: definedEnv(sandboxed.env),
          cwd: ctx.workspace,
          name: serverName(command),
          timeoutMs: mcpTimeoutMs(ctx),
          outputBytes: ctx.limits.outputBytes,
        });
      } catch (error) {
        sandboxed.release();
        throw error;
      }
      const inner = session;
      const wrapped: AdHocSession = {
        server: inner.server,
        pid: inner.pid,
        listTools: (options) => inner.listTools(options),
        callTool: (tool, toolArgs, options) => inner.callTool(tool, toolArgs, options),
        refusalOf: (tool, options) => inner.refusalOf(tool, options),
        close: async () => {
          try {
            await inner.close();
          } finally {
            // A sandbox stopped while still starting can outlive bubblewrap: end it by its mark.
            if (sandboxed.mark) killMarkedProcesses(sandboxed.mark);
            sandboxed.release();
          }
        },
      };
      return wrapped;
    },
    (session) => session.close(),
  );
}

/** The server's name as the MCP client derives it from the program (not from bubblewrap, which now runs it). */
function serverName(command: string): string {
  const name = basename(command)
    .replace(/\.(c|m)?js$/, "")
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 64);
  return name || "adhoc";
}
