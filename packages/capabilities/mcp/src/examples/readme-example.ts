// The README example (there imported as @capgate/capability-mcp), kept as a file so the
// typecheck covers it and a test runs it against the installed server-everything.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeMcpPool } from "@capgate/mcp-client/stdio";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolResult,
} from "@capgate/tools";
import { capability } from "../index.js";

export async function example(
  workspace: string,
  // How to start the server; a test passes `node <installed entry> stdio` instead of npx.
  server: { command: string; args: string[] } = {
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-everything"],
  },
): Promise<ToolResult[]> {
  // The host's pool of configured servers (normally built from capgate.config.json's mcpServers).
  const pool = createNodeMcpPool({ everything: server });
  // capgate's own files (traces, the sandbox journal): a directory outside the workspace
  const stateDir = mkdtempSync(join(tmpdir(), "capgate-state-"));
  const ctx: ExecuteContext = {
    workspace, // ad-hoc servers run here
    signal: AbortSignal.timeout(120_000),
    env: { PATH: process.env.PATH, HOME: process.env.HOME }, // ad-hoc servers get this environment
    profile: { name: "Orchestrator", maySpawnWorkers: true },
    limits: DEFAULT_LIMITS,
    policy: {}, // policy.shell adds deny/ask rules for ad-hoc command lines
    services: { mcp: pool },
    resources: createHostResources(), // keeps ad-hoc sessions between calls
    stateDir,
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true }, // a host passes its Router (the loaded set) here
  };
  const results: ToolResult[] = [];
  try {
    // A configured server, by name.
    results.push(await executeTool("mcp.list_tools", { command: "everything" }, ctx));
    results.push(
      await executeTool(
        "mcp.call",
        { command: "everything", tool: "echo", arguments: { message: "hi" } },
        ctx,
      ),
    );
    // → { success: true, summary: "Echo: hi", data: { server: "everything", tool: "echo", … } }

    // An ad-hoc command line: shell policy first, then spawned without a shell, session kept.
    results.push(
      await executeTool(
        "mcp.call",
        { command: server.command, args: server.args, tool: "get-sum", arguments: { a: 2, b: 3 } },
        ctx,
      ),
    );
    // A GUI opener is refused before anything starts (a thrown PolicyDeniedError, code policy_denied).
    await executeTool("mcp.list_tools", { command: "xdg-open https://example.com" }, ctx).catch((e: Error) =>
      results.push({ success: false, summary: e.message }),
    );
    for (const r of results) console.log(r.success, r.summary.split("\n")[0]);
    return results;
  } finally {
    await ctx.resources.closeAll(); // ends ad-hoc servers
    await pool.close(); // ends configured ones
    rmSync(stateDir, { recursive: true, force: true });
  }
}
