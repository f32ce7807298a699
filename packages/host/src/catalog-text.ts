import type { CapabilitySource, McpIndexResult } from "@capgate/harness";
import { type CapabilityManifest, signatureFromSchema } from "@capgate/schema";
import { PLAIN_TEXT, safeStrings, type TextStyle, terminalSafe } from "./event-text.js";

/**
 * Where a registered capability came from, as a catalog line shows it: `built-in`, `added
 * by the host`, the plugin's `package@version (spec)` or `spec → file`; `MCP server` for a
 * server's tools (which have no source entry).
 */
export function describeCapabilitySource(source: CapabilitySource | undefined): string {
  if (!source) return "MCP server";
  if (source.kind === "builtin") return "built-in";
  if (source.kind === "option") return "added by the host";
  return source.package ? `${source.package} (${source.spec})` : `${source.spec} → ${source.file}`;
}

/**
 * The catalog as text lines: first each configured MCP server that gave no tools (and why),
 * then each capability (version, tool count, profiles, where it came from) with its
 * description, then where each server's tools came from (live or the cache, how many were
 * skipped).
 */
export function describeCatalog(
  catalog: {
    manifests: readonly CapabilityManifest[];
    sources: ReadonlyMap<string, CapabilitySource>;
    servers: readonly McpIndexResult[];
  },
  p: TextStyle = PLAIN_TEXT,
): string[] {
  // Names, descriptions and errors may come from MCP servers or plugins.
  const servers = safeStrings(catalog.servers);
  const lines: string[] = [];
  for (const s of servers)
    if (s.tools === 0)
      lines.push(
        `${p.bold(`mcp:${s.server}`)} ${p.dim(`0 tools · ${s.error ? `not reachable: ${s.error}` : "no tools listed"}`)}`,
      );
  for (const manifest of catalog.manifests) {
    const m = safeStrings(manifest);
    const from = terminalSafe(describeCapabilitySource(catalog.sources.get(manifest.name)));
    lines.push(
      `${p.bold(m.name)} ${p.dim(`v${m.version} · ${m.tools.length} tools · ${m.profileFit.join(", ")} · ${from}`)}`,
    );
    lines.push(`  ${m.description}`);
  }
  const where = { live: "live", cache: "from the cache", none: "unknown" } as const;
  for (const s of servers)
    if (s.tools > 0 || s.skipped > 0)
      lines.push(
        p.dim(
          `mcp:${s.server}: ${s.tools} tools (${where[s.source]})${s.skipped > 0 ? `, ${s.skipped} skipped` : ""}`,
        ),
      );
  return lines;
}

/** One capability: its line, its description, and each tool's signature, risk and description. */
export function describeCapability(
  manifest: CapabilityManifest,
  source: CapabilitySource | undefined,
  p: TextStyle = PLAIN_TEXT,
): string[] {
  // A server's or plugin's names and descriptions, safe on a terminal.
  const m = safeStrings(manifest);
  const lines = [
    `${p.bold(m.name)} ${p.dim(`v${m.version} · fits ${m.profileFit.join(", ")} · ${terminalSafe(describeCapabilitySource(source))}`)}`,
    m.description,
  ];
  for (const tool of m.tools) {
    lines.push(
      `\n  ${p.cyan(signatureFromSchema(tool.name, tool.inputSchema))} ${p.dim(`[${tool.risk ?? "read"}]`)}`,
    );
    lines.push(`    ${tool.description}`);
  }
  return lines;
}
