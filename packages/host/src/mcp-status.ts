import type { McpAuthStatus, McpPool, McpServerConfig } from "@capgate/mcp-client";

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
