import { describeCapability, describeCatalog } from "@capgate/host";
import { withSignatures } from "@capgate/schema";
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
    for (const line of describeCatalog({ manifests, sources: harness.capabilitySources, servers }, p))
      io.out(line);
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
    for (const line of describeCapability(manifest, source, paint(io))) io.out(line);
    return ExitCode.ok;
  } finally {
    await harness.close();
  }
}
