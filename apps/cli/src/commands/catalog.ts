import { describeCapabilitySource } from "@capgate/host";
import { signatureFromSchema, withSignatures } from "@capgate/schema";
import { type GlobalOptions, intOption, openHarness } from "../context.js";
import { ExitCode } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";
import { unknownName } from "../suggest.js";

export async function searchCommand(
  query: string,
  options: { limit?: string; json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const limit = intOption(options.limit, "--limit", 5, { max: 50 });
  const harness = await openHarness(global, {}, { io });
  try {
    // Configured MCP servers' tools are searchable too (cached lists at once; a short connect refreshes them).
    if (harness.mcp) await harness.indexMcpTools({ connectTimeoutMs: 5_000 });
    const hits = harness.registry.search(query, { limit });
    if (options.json) {
      printJson(io, hits);
      return ExitCode.ok;
    }
    const p = paint(io);
    if (hits.length === 0) {
      io.out(p.dim(`no capability matches "${query}"`));
      return ExitCode.ok;
    }
    for (const hit of hits) {
      io.out(`${p.bold(hit.capability)} ${p.dim(hit.score.toFixed(2))} — ${hit.description}`);
      for (const t of hit.tools) io.out(`  ${p.cyan(t.signature)}`);
    }
    return ExitCode.ok;
  } finally {
    await harness.close();
  }
}

export async function capabilitiesCommand(
  options: { json?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const harness = await openHarness(global, {}, { io });
  try {
    // Configured MCP servers are listed too: from the disk cache, or by connecting within a short budget (as search does).
    const servers = harness.mcp ? await harness.indexMcpTools({ connectTimeoutMs: 5_000 }) : [];
    const manifests = harness.registry.list();
    if (options.json) {
      printJson(
        io,
        manifests.map((m) => ({
          ...withSignatures(m),
          source: harness.capabilitySources.get(m.name) ?? { kind: "mcp" },
        })),
      );
      return ExitCode.ok;
    }
    const p = paint(io);
    for (const s of servers) {
      if (s.tools > 0) continue; // shown with its manifest below
      io.out(
        `${p.bold(`mcp:${s.server}`)} ${p.dim(`0 tools · ${s.error ? `not reachable: ${s.error}` : "no tools listed"}`)}`,
      );
    }
    for (const m of manifests) {
      const from = harness.capabilitySources.get(m.name);
      io.out(
        `${p.bold(m.name)} ${p.dim(`v${m.version} · ${m.tools.length} tools · ${m.profileFit.join(", ")} · ${describeCapabilitySource(from)}`)}`,
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
    return ExitCode.ok;
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
  const harness = await openHarness(global, {}, { io });
  try {
    // A configured server's tools may not be cached yet (a fresh state dir): list them, as
    // `capgate capabilities` does, before saying the name is unknown.
    if (!harness.registry.get(name) && name.startsWith("mcp:") && harness.mcp)
      await harness.indexMcpTools({ connectTimeoutMs: 5_000 });
    const manifest = harness.registry.get(name);
    if (!manifest)
      throw await unknownName(
        "capability",
        name,
        harness.registry.list().map((m) => m.name),
      );
    const source = harness.capabilitySources.get(manifest.name);
    if (options.json) {
      printJson(io, { ...withSignatures(manifest), source: source ?? { kind: "mcp" } });
      return ExitCode.ok;
    }
    const p = paint(io);
    io.out(
      `${p.bold(manifest.name)} ${p.dim(`v${manifest.version} · fits ${manifest.profileFit.join(", ")} · ${describeCapabilitySource(source)}`)}`,
    );
    io.out(manifest.description);
    for (const tool of manifest.tools) {
      io.out(
        `\n  ${p.cyan(signatureFromSchema(tool.name, tool.inputSchema))} ${p.dim(`[${tool.risk ?? "read"}]`)}`,
      );
      io.out(`    ${tool.description}`);
    }
    return ExitCode.ok;
  } finally {
    await harness.close();
  }
}
