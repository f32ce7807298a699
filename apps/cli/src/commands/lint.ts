import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { validateManifest } from "@capgate/registry";
import { CliError } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";

/** Where the manifest comes from: a .json file, a module exporting `manifest`, a package directory, or a package name. */
async function loadManifest(target: string, cwd: string): Promise<{ manifest: unknown; source: string }> {
  const path = resolve(cwd, target);
  if (existsSync(path) && statSync(path).isFile()) {
    if (extname(path) === ".json") {
      try {
        return { manifest: JSON.parse(readFileSync(path, "utf8")), source: path };
      } catch (error) {
        throw new CliError(`${path} is not valid JSON: ${(error as Error).message}`, 1);
      }
    }
    return { manifest: await manifestFromModule(path), source: path };
  }
  const { findPackageDir, packageEntry } = await import("@capgate/harness");
  const dir = existsSync(path) && statSync(path).isDirectory() ? path : findPackageDir(target, cwd);
  if (!dir)
    throw new CliError(
      `no file, directory or installed package named '${target}'`,
      2,
      "pass a manifest .json, a module, a package directory or a package name",
    );
  let entry: string;
  try {
    entry = packageEntry(dir).file;
  } catch (error) {
    throw new CliError((error as Error).message, 2);
  }
  return { manifest: await manifestFromModule(entry), source: entry };
}

async function manifestFromModule(path: string): Promise<unknown> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(`cannot import ${path}: ${(error as Error).message}`, 1);
  }
  if (!("manifest" in mod))
    throw new CliError(
      `${path} does not export \`manifest\``,
      1,
      "a capability package exports its manifest as `manifest`",
    );
  return mod.manifest;
}

export async function lintCommand(target: string, options: { json?: boolean }, io: CliIO): Promise<number> {
  const { manifest, source } = await loadManifest(target, process.cwd());
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
