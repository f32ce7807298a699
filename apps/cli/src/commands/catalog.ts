import { signatureFromSchema } from "@capgate/schema";
import { type GlobalOptions, openHarness } from "../context.js";
import { CliError } from "../errors.js";
import { type CliIO, paint } from "../io.js";

export async function searchCommand(
  query: string,
  options: { limit?: string; json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const limit = options.limit === undefined ? 5 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 50)
    throw new CliError(`--limit must be an integer from 1 to 50, got '${options.limit}'`, 2);
  const harness = await openHarness(global, {});
  try {
    // Configured MCP servers' tools are searchable too (cached lists at once; a short connect refreshes them).
    if (harness.mcp) await harness.indexMcpTools({ connectTimeoutMs: 5_000 });
    const hits = harness.registry.search(query, { limit });
    if (options.json) {
      io.out(JSON.stringify(hits, null, 2));
      return 0;
    }
    const p = paint(io);
    if (hits.length === 0) {
      io.out(p.dim(`no capability matches "${query}"`));
      return 0;
    }
    for (const hit of hits) {
      io.out(`${p.bold(hit.capability)} ${p.dim(hit.score.toFixed(2))} — ${hit.description}`);
      for (const t of hit.tools) io.out(`  ${p.cyan(t.signature)}`);
    }
    return 0;
  } finally {
    await harness.close();
  }
}

export async function capabilitiesCommand(
  options: { json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const harness = await openHarness(global, {});
  try {
    // Configured MCP servers are listed too: from the disk cache, or by connecting within a short budget (as search does).
    const servers = harness.mcp ? await harness.indexMcpTools({ connectTimeoutMs: 5_000 }) : [];
    const manifests = harness.registry.list();
    if (options.json) {
      io.out(JSON.stringify(manifests, null, 2));
      return 0;
    }
    const p = paint(io);
    for (const s of servers) {
      if (s.tools > 0) continue; // shown with its manifest below
      io.out(
        `${p.bold(`mcp:${s.server}`)} ${p.dim(`0 tools · ${s.error ? `not reachable: ${s.error}` : "no tools listed"}`)}`,
      );
    }
    for (const m of manifests) {
      io.out(
        `${p.bold(m.name)} ${p.dim(`v${m.version} · ${m.tools.length} tools · ${m.profileFit.join(", ")}`)}`,
      );
      io.out(`  ${m.description}`);
    }
    for (const s of servers)
      if (s.tools > 0 || s.skipped > 0)
        io.out(
          p.dim(
            `mcp:${s.server}: ${s.tools} tools (${s.source === "live" ? "live" : s.source === "cache" ? "from the cache" : "unknown"})${s.skipped > 0 ? `, ${s.skipped} skipped` : ""}`,
          ),
        );
    io.out(
      p.dim(
        `${manifests.length} capabilities, ${manifests.reduce((n, m) => n + m.tools.length, 0)} tools — \`capgate capabilities show NAME\` for signatures`,
      ),
    );
    return 0;
  } finally {
    await harness.close();
  }
}

export async function showCapabilityCommand(
  name: string,
  options: { json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const harness = await openHarness(global, {});
  try {
    const manifest = harness.registry.get(name);
    if (!manifest) {
      const names = harness.registry.list().map((m) => m.name);
      const { closestMatch } = await import("@capgate/schema");
      const guess = closestMatch(name, names);
      throw new CliError(
        `no capability named '${name}'`,
        2,
        guess ? `did you mean '${guess}'?` : `known: ${names.join(", ")}`,
      );
    }
    if (options.json) {
      io.out(JSON.stringify(manifest, null, 2));
      return 0;
    }
    const p = paint(io);
    io.out(
      `${p.bold(manifest.name)} ${p.dim(`v${manifest.version} · fits ${manifest.profileFit.join(", ")}`)}`,
    );
    io.out(manifest.description);
    for (const tool of manifest.tools) {
      io.out(
        `\n  ${p.cyan(signatureFromSchema(tool.name, tool.inputSchema))} ${p.dim(`[${tool.risk ?? "read"}]`)}`,
      );
      io.out(`    ${tool.description}`);
    }
    return 0;
  } finally {
    await harness.close();
  }
}
