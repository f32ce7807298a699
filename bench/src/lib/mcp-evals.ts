import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { mcpCapabilityName, mcpManifest } from "@capgate/registry";
import type { RetrievalSet } from "./retrieval.js";

/**
 * Real MCP servers' tool lists with the requests their maintainers wrote to test tool
 * selection (bench/data/mcp-evals, see its README): PagerDuty's competency tests over its
 * 103 tools (`list_incidents`, `get_schedule_v3_rotation`, … — a provider's many
 * near-identical tools) and MongoDB's accuracy tests over its 49 (`find`, `atlas-list-clusters`,
 * …), beside six everyday servers' lists with no queries of their own (filesystem, memory,
 * everything, sequential-thinking, github, playwright), which compete for every query as they
 * would in a user's configuration. Each server is registered the way capgate registers a
 * configured server (`mcp:<server>`, tools `<server>/<tool>`, its `instructions` as context).
 * A query's answer is its expected tool (any of them, when a test expects several calls).
 */

interface McpEvalsBundle {
  servers: Array<{
    name: string;
    instructions?: string;
    tools: unknown[];
  }>;
  queries: Array<{ query: string; server: string; tools: string[] }>;
}

export function mcpEvalsPath(): string {
  return resolve(
    dirname(fileURLToPath(import.meta.url)),
    "..",
    "..",
    "data",
    "mcp-evals",
    "mcp-evals.json.gz",
  );
}

/** The whole set, and one set per server that has queries (its queries, every server's tools). */
export function mcpEvalsSets(): RetrievalSet[] {
  const path = mcpEvalsPath();
  if (!existsSync(path)) {
    console.log(`search.mcp-evals: skipped: ${path} not found`);
    return [];
  }
  const bundle = JSON.parse(gunzipSync(readFileSync(path)).toString("utf8")) as McpEvalsBundle;
  const mcpServers = bundle.servers.map((s) => ({
    name: s.name,
    tools: s.tools,
    ...(s.instructions ? { instructions: s.instructions } : {}),
  }));
  const manifests = mcpServers.map((s) => mcpManifest(s.name, s.tools).manifest);
  const toSet = (name: string, server?: string): RetrievalSet => ({
    name,
    manifests,
    mcpServers,
    queries: bundle.queries
      .filter((q) => server === undefined || q.server === server)
      .map((q) => ({
        query: q.query,
        capabilities: new Set([mcpCapabilityName(q.server)]),
        tools: new Set(q.tools.map((t) => `${q.server}/${t}`)),
      })),
  });
  const withQueries = [...new Set(bundle.queries.map((q) => q.server))].sort();
  return [toSet("mcp-evals"), ...withQueries.map((s) => toSet(`mcp-evals.${s}`, s))];
}
