import { validateManifest } from "@capgate/registry";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";

export async function lintCommand(target: string, options: { json?: boolean }, io: CliIO): Promise<number> {
  const { readCapabilityManifest } = await import("@capgate/harness");
  const { manifest, source } = await readCapabilityManifest(target, process.cwd());
  const result = validateManifest(manifest);
  // The quality bar of the manifest contract (descriptions, bounds): findings are warnings,
  // since a capability may have reasons (a string that may be empty) the contract cannot see.
  const { manifestContractProblems } = await import("@capgate/tools");
  const warnings = result.ok
    ? manifestContractProblems(manifest as Parameters<typeof manifestContractProblems>[0])
    : [];
  if (options.json) {
    printJson(io, { source, ...result, warnings });
    return result.ok ? 0 : 1;
  }
  const p = paint(io);
  for (const w of warnings) io.err(`${p.yellow("⚠")} ${w}`);
  if (result.ok) {
    const m = manifest as { name: string; version: string; tools: unknown[] };
    const note = warnings.length > 0 ? p.yellow(` (${warnings.length} contract warning(s))`) : "";
    io.out(`${p.green("ok")} ${m.name} v${m.version} — ${m.tools.length} tool(s)${note} ${p.dim(source)}`);
    return 0;
  }
  for (const problem of result.problems)
    io.err(`${p.red("✗")} ${problem.path || "(manifest)"}: ${problem.message}`);
  io.err(p.dim(`${result.problems.length} problem(s) in ${source}`));
  return 1;
}
