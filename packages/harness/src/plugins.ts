import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { validateManifest } from "@capgate/registry";
import { CapgateError } from "@capgate/schema";
import { type Capability, manifestContractProblems } from "@capgate/tools";
import { type ResolvedConfig, resolveConfigPath } from "./config.js";

/** Where a registered capability came from, for `capgate capabilities`. */
export interface CapabilitySource {
  /** "builtin", "option" (HarnessOptions.capabilities) or "plugin" (config / --capability). */
  kind: "builtin" | "option" | "plugin";
  /** The entry as written (`capgate-capability-weather`, `./caps/hello`). */
  spec?: string;
  /** The module file it was loaded from. */
  file?: string;
  /** The package's name and version, when it is a package. */
  package?: string;
}

/**
 * A plugin's problem, reported by its spec: an `error` means it did not load (the others
 * still do); a `warning` is a manifest-contract finding on a plugin that did load.
 */
export interface CapabilityLoadProblem {
  spec: string;
  severity: "error" | "warning";
  message: string;
}

export interface LoadedPlugin {
  capability: Capability;
  source: CapabilitySource;
  /** Manifest-contract findings (descriptions, bounds); the plugin is loaded regardless. */
  warnings: string[];
}

const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/i;

const isPathSpec = (spec: string) =>
  spec.startsWith("./") ||
  spec.startsWith("../") ||
  spec.startsWith("/") ||
  spec.startsWith("~/") ||
  spec === ".";

/**
 * The config with more capability plugins beside its own — the CLI's `--capability` for a
 * command that hands a config on (`capgate eval`) — each fixed to what it names from
 * `baseDir` (default the current directory), as `HarnessOptions.capabilityPlugins` are: a
 * path made absolute, an installed package by its directory.
 */
export function withCapabilityPlugins(
  resolved: ResolvedConfig,
  plugins: readonly string[],
  baseDir: string = process.cwd(),
): ResolvedConfig {
  if (plugins.length === 0) return resolved;
  // A package not installed from baseDir is named where it was looked for: never left for
  // the loader to find from the config's directory instead.
  const fixed = plugins.map((spec) =>
    isPathSpec(spec)
      ? resolveConfigPath(baseDir, spec)
      : (findPackageDir(spec, baseDir) ?? join(baseDir, "node_modules", spec)),
  );
  const capabilities = [...(resolved.config.capabilities ?? []), ...fixed];
  return { ...resolved, config: { ...resolved.config, capabilities } };
}

/**
 * The package directory `name` resolves to from `baseDir`, walking up node_modules as Node
 * does; undefined when it is not installed or `name` is not a package name.
 */
export function findPackageDir(name: string, baseDir: string): string | undefined {
  if (!PACKAGE_NAME.test(name)) return undefined;
  let dir = baseDir;
  while (true) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function conditionTarget(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    const map = value as Record<string, unknown>;
    for (const key of ["import", "node", "default"]) {
      const t = conditionTarget(map[key]);
      if (t) return t;
    }
  }
  return undefined;
}

/** A package directory's ESM entry (exports "." import/default, else main). */
export function packageEntry(dir: string): { file: string; package: string } {
  const file = join(dir, "package.json");
  if (!existsSync(file)) throw new Error(`${dir} has no package.json`);
  const pkg = JSON.parse(readFileSync(file, "utf8")) as {
    exports?: unknown;
    main?: string;
    name?: string;
    version?: string;
  };
  const exportsField = pkg.exports;
  const root =
    exportsField && typeof exportsField === "object" && "." in (exportsField as object)
      ? (exportsField as Record<string, unknown>)["."]
      : exportsField;
  const target = conditionTarget(root) ?? pkg.main;
  const label = `${pkg.name ?? dir}${pkg.version ? `@${pkg.version}` : ""}`;
  if (typeof target !== "string") throw new Error(`${label} declares no entry point (exports "." or main)`);
  const entry = join(dir, target);
  if (!existsSync(entry))
    throw new Error(`${label}'s entry ${target} does not exist — build the package first`);
  return { file: entry, package: label };
}

/**
 * Where a capability spec points: a path (relative to `baseDir`, the config file's
 * directory) to a module file or a package directory, or the name of a package installed
 * in `baseDir`'s node_modules (or a parent's).
 */
export function resolveCapabilitySpec(spec: string, baseDir: string): { file: string; package?: string } {
  if (isPathSpec(spec)) {
    const path = resolveConfigPath(baseDir, spec);
    if (!existsSync(path)) throw new Error(`${path} does not exist`);
    return statSync(path).isDirectory() ? packageEntry(path) : { file: path };
  }
  if (!PACKAGE_NAME.test(spec)) throw new Error("is neither a path (./…, ../…, /…) nor a package name");
  const dir = findPackageDir(spec, baseDir);
  if (!dir) throw new Error(`is not installed in ${baseDir} (npm install ${spec})`);
  return packageEntry(dir);
}

/**
 * A capability's manifest checked the way a plugin is: `errors` from the registry's format
 * check (which refuses to register it), `warnings` from the manifest contract.
 */
export function capabilityProblems(
  capability: unknown,
  profiles?: readonly string[],
): { errors: string[]; warnings: string[] } {
  const c = capability as Partial<Capability> | undefined;
  if (!c || typeof c !== "object" || !c.manifest || !(c.handlers instanceof Map))
    return {
      errors: ["does not export a capability (`export const capability = defineCapability({...})`)"],
      warnings: [],
    };
  const checked = validateManifest(c.manifest);
  if (!checked.ok)
    return { errors: checked.problems.map((p) => `${p.path || "(manifest)"}: ${p.message}`), warnings: [] };
  return {
    errors: [],
    warnings: manifestContractProblems(c.manifest, profiles ? { profiles: [...profiles] } : {}),
  };
}

/** Import one spec and lint what it exports as `capability`. Throws with the reason it cannot be used. */
export async function loadCapabilityPlugin(
  spec: string,
  baseDir: string,
  profiles?: readonly string[],
): Promise<LoadedPlugin> {
  const where = resolveCapabilitySpec(spec, baseDir);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(where.file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`cannot be imported from ${where.file}: ${(error as Error).message}`);
  }
  const { errors, warnings } = capabilityProblems(mod.capability, profiles);
  if (errors.length > 0)
    throw new Error(`fails the manifest check (${errors.length}): ${errors.slice(0, 3).join("; ")}`);
  return {
    capability: mod.capability as Capability,
    source: { kind: "plugin", spec, file: where.file, ...(where.package ? { package: where.package } : {}) },
    warnings,
  };
}

/**
 * Load the config's (and the CLI's --capability) capability plugins. A broken one is
 * reported by name in `problems` and the rest still load; a name clash with one already
 * registered is a problem too.
 */
export async function loadCapabilityPlugins(
  specs: readonly string[],
  baseDir: string,
  taken: { has(name: string): boolean; toolTaken(tool: string): string | undefined },
  profiles?: readonly string[],
): Promise<{ loaded: LoadedPlugin[]; problems: CapabilityLoadProblem[] }> {
  const loaded: LoadedPlugin[] = [];
  const problems: CapabilityLoadProblem[] = [];
  const names = new Set<string>();
  const tools = new Map<string, string>();
  for (const spec of specs) {
    try {
      const plugin = await loadCapabilityPlugin(spec, baseDir, profiles);
      const name = plugin.capability.manifest.name;
      if (taken.has(name) || names.has(name)) throw new Error(`its name '${name}' is already registered`);
      for (const tool of plugin.capability.manifest.tools) {
        const owner = taken.toolTaken(tool.name) ?? tools.get(tool.name);
        if (owner) throw new Error(`its tool '${tool.name}' clashes with '${owner}'`);
      }
      names.add(name);
      for (const tool of plugin.capability.manifest.tools) tools.set(tool.name, name);
      loaded.push(plugin);
      for (const warning of plugin.warnings) problems.push({ spec, severity: "warning", message: warning });
    } catch (error) {
      problems.push({ spec, severity: "error", message: (error as Error).message });
    }
  }
  return { loaded, problems };
}

/**
 * The manifest a capability author means by `target`, to check before publishing
 * (`capgate capability lint`): a manifest `.json` file, a module exporting `manifest`, a
 * package directory or an installed package's name (its entry exporting `manifest`).
 * @throws CapgateError `capability_not_found` (nothing by that name) or
 * `capability_unreadable` (invalid JSON, a module that cannot be imported or exports no
 * `manifest`: code `no_manifest_export`).
 */
export async function readCapabilityManifest(
  target: string,
  cwd: string,
): Promise<{ manifest: unknown; source: string }> {
  const path = resolve(cwd, target);
  if (existsSync(path) && statSync(path).isFile()) {
    if (extname(path) !== ".json") return { manifest: await manifestOfModule(path), source: path };
    try {
      return { manifest: JSON.parse(readFileSync(path, "utf8")), source: path };
    } catch (error) {
      throw new CapgateError(
        "capability_unreadable",
        `${path} is not valid JSON: ${(error as Error).message}`,
      );
    }
  }
  const dir = existsSync(path) && statSync(path).isDirectory() ? path : findPackageDir(target, cwd);
  if (!dir)
    throw new CapgateError(
      "capability_not_found",
      `no file, directory or installed package named '${target}'`,
    );
  let entry: string;
  try {
    entry = packageEntry(dir).file;
  } catch (error) {
    throw new CapgateError("capability_not_found", (error as Error).message);
  }
  return { manifest: await manifestOfModule(entry), source: entry };
}

async function manifestOfModule(path: string): Promise<unknown> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new CapgateError("capability_unreadable", `cannot import ${path}: ${(error as Error).message}`);
  }
  if (!("manifest" in mod))
    throw new CapgateError("no_manifest_export", `${path} does not export \`manifest\``);
  return mod.manifest;
}
