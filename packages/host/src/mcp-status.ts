import type { McpAuthStatus, McpPool, McpServerConfig } from "@capgate/mcp-client";
import { PLAIN_TEXT, type TextStyle } from "./event-text.js";

/** One configured MCP server as an operator checks it: transport, login state and whether it answers. */
export interface McpServerStatus {
  server: string;
  transport: "stdio" | "http";
  enabled: boolean;
  auth: McpAuthStatus;
  connection: { state: "connected" | "failed" | "skipped"; tools?: number; error?: string; code?: string };
}

export interface McpStatusOptions {
  /** Where logins live ($CAPGATE_HOME, or the config's stateDir). */
  stateDir: string;
  /** Connect budget per server (default 5 s). */
  timeoutMs?: number;
  /** Do not connect: stored login state only. */
  offline?: boolean;
  /**
   * The pool that connects: the harness's (`harness.mcp`), which starts each server the way
   * a run does (in the sandbox when its entry says `sandbox: true`, with the host PATH).
   * Required unless `offline`; this function never starts a server any other way.
   */
  pool?: Pick<McpPool, "listTools">;
}

/**
 * Each configured server's login state and, unless offline, whether it connects and how
 * many tools it lists within the budget — in config order. Never carries a token.
 */
export async function mcpServerStatus(
  servers: Record<string, McpServerConfig>,
  options: McpStatusOptions,
): Promise<McpServerStatus[]> {
  const budget = options.timeoutMs ?? 5_000;
  const { describeAuth, isStdioServer } = await import("@capgate/mcp-client");
  const { fileAuthStore } = await import("@capgate/mcp-client/stdio");
  const store = fileAuthStore(options.stateDir);
  const rows: McpServerStatus[] = [];
  const pool = options.offline ? undefined : options.pool;
  if (!options.offline && !pool && Object.keys(servers).length > 0)
    throw new Error(
      "mcpServerStatus connects through the harness's MCP pool: pass { pool: harness.mcp } or { offline: true }",
    );
  await Promise.all(
    Object.entries(servers).map(async ([server, entry]) => {
      const row: McpServerStatus = {
        server,
        transport: isStdioServer(entry) ? "stdio" : "http",
        enabled: entry.enabled !== false,
        auth: describeAuth(entry, await store.load(server)),
        connection: { state: "skipped" },
      };
      rows.push(row);
      if (!pool || !row.enabled) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const tools = await Promise.race([
          pool.listTools(server),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${budget} ms`)), budget);
          }),
        ]);
        row.connection = { state: "connected", tools: tools.length };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        row.connection = {
          state: "failed",
          error: error instanceof Error ? error.message : String(error),
          ...(typeof code === "string" ? { code } : {}),
        };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const order = Object.keys(servers);
  return rows.sort((a, b) => order.indexOf(a.server) - order.indexOf(b.server));
}

/** A login state in words: `no OAuth`, or its state, grant, scopes, expiry and whether it refreshes. Never a token. */
export function describeAuthStatus(status: McpAuthStatus): string {
  if (status.state === "none") return "no OAuth";
  const parts: string[] = [status.state.replace("_", " ")];
  if (status.grant && status.grant !== "authorization_code") parts.push(status.grant);
  if (status.scopes?.length) parts.push(`scopes: ${status.scopes.join(" ")}`);
  if (status.expiresAt)
    parts.push(`${status.state === "expired" ? "expired" : "expires"} ${status.expiresAt}`);
  if (status.refreshable) parts.push("refreshable");
  return parts.join(", ");
}

/** One server's status as a line: name, transport, connection, login. */
export function describeMcpServerStatus(row: McpServerStatus, p: TextStyle = PLAIN_TEXT): string {
  const c = row.connection;
  const connection = !row.enabled
    ? p.dim("disabled")
    : c.state === "connected"
      ? p.green(`connected, ${c.tools} tool(s)`)
      : c.state === "failed"
        ? p.yellow(`failed: ${c.error}`)
        : p.dim("not checked");
  return `${p.bold(row.server)} (${row.transport}) · ${connection} · auth: ${describeAuthStatus(row.auth)}`;
}
