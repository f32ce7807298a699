import {
  type CapabilityManifest,
  CapgateError,
  type JsonSchema,
  signatureFromSchema,
  type ToolManifest,
} from "@capgate/schema";

/** Readonly all the way down, so `as const` manifests load without a cast. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer E)[]
    ? readonly DeepReadonly<E>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** What `load` accepts: a CapabilityManifest, mutable or declared `as const`. */
export type ManifestInput = DeepReadonly<CapabilityManifest>;

interface Entry {
  manifest: CapabilityManifest;
  signatures: Map<string, string>;
}

// Code-unit order, like a BTreeMap<String, _>: the same on every machine and locale.
const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The set of loaded capabilities: what the dispatcher may call and what the model sees.
 * Loading keeps a frozen copy, so a caller mutating its manifest afterwards changes nothing
 * here; every listing is sorted, so the context a model gets is deterministic.
 */
export class Router {
  readonly #loaded = new Map<string, Entry>();
  /** Tool name → owning capability and the tool's manifest, for the loaded set only (O(1) dispatch lookups). */
  readonly #tools = new Map<string, { owner: string; tool: ToolManifest }>();

  /**
   * Load a capability (its tools become callable). A manifest with the name of one already
   * loaded replaces it. Throws `invalid_manifest` for a malformed manifest and
   * `tool_conflict` when a tool name belongs to another loaded capability; either way the
   * loaded set is unchanged.
   */
  load(manifest: ManifestInput): void {
    const copy = snapshot(manifest);
    for (const tool of copy.tools) {
      const owner = this.#tools.get(tool.name)?.owner;
      if (owner !== undefined && owner !== copy.name) {
        throw new CapgateError(
          "tool_conflict",
          `Cannot load '${copy.name}': its tool '${tool.name}' is already provided by loaded capability '${owner}'. Unload '${owner}' first.`,
          { property: "tools" },
        );
      }
    }
    this.unload(copy.name);
    const signatures = new Map<string, string>();
    for (const tool of copy.tools) {
      signatures.set(tool.name, signatureFromSchema(tool.name, tool.inputSchema));
      this.#tools.set(tool.name, { owner: copy.name, tool });
    }
    this.#loaded.set(copy.name, { manifest: copy, signatures });
  }

  /** Unload a capability by name; true when it was loaded. */
  unload(name: string): boolean {
    const entry = this.#loaded.get(name);
    if (!entry) return false;
    for (const tool of entry.manifest.tools) this.#tools.delete(tool.name);
    this.#loaded.delete(name);
    return true;
  }

  /** Unload everything. Profiles call this before preloading, so a mode change drops every old tool. */
  clearLoaded(): void {
    this.#loaded.clear();
    this.#tools.clear();
  }

  /** Names of the loaded capabilities, sorted. */
  loaded(): string[] {
    return [...this.#loaded.keys()].sort(byCodeUnit);
  }

  isLoaded(name: string): boolean {
    return this.#loaded.has(name);
  }

  /** The loaded manifests (frozen), sorted by name. */
  loadedManifests(): CapabilityManifest[] {
    return this.loaded().map((name) => this.#loaded.get(name)!.manifest);
  }

  isToolLoaded(tool: string): boolean {
    return this.#tools.has(tool);
  }

  /** Name of the loaded capability that provides `tool`, e.g. `fs` for `fs.read`, `mcp:github` for `github/search`. */
  ownerOf(tool: string): string | undefined {
    return this.#tools.get(tool)?.owner;
  }

  /** The loaded tool's manifest (frozen), or undefined when it is not loaded. */
  toolManifest(tool: string): ToolManifest | undefined {
    return this.#tools.get(tool)?.tool;
  }

  /** The input schema the dispatcher validates a loaded tool's arguments against, or undefined. */
  schemaForLoadedTool(tool: string): JsonSchema | undefined {
    return this.toolManifest(tool)?.inputSchema;
  }

  /** One signature line per loaded tool, sorted by tool name: `fs.read(path: string, offset?: integer, limit?: integer)`. */
  loadedSignatures(): string[] {
    const lines: [string, string][] = [];
    for (const entry of this.#loaded.values()) lines.push(...entry.signatures);
    return lines.sort((a, b) => byCodeUnit(a[0], b[0])).map(([, line]) => line);
  }
}

function invalid(message: string, property: string): CapgateError {
  return new CapgateError("invalid_manifest", message, { property });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A deep, frozen copy of the manifest after the structural checks a router needs (names,
 * tool list, schema objects, no duplicate tools). Full validation (name rules, closed
 * schemas, descriptions) is the registry's job at registration.
 */
function snapshot(input: ManifestInput): CapabilityManifest {
  if (!isPlainObject(input)) throw invalid("A manifest must be an object.", "");
  const m = input as Record<string, unknown>;
  if (typeof m.name !== "string" || m.name.length === 0)
    throw invalid("Manifest `name` must be a non-empty string.", "name");
  if (!Array.isArray(m.tools)) throw invalid(`Manifest '${m.name}': \`tools\` must be an array.`, "tools");
  const seen = new Set<string>();
  m.tools.forEach((tool: unknown, i: number) => {
    const at = `tools[${i}]`;
    if (!isPlainObject(tool)) throw invalid(`Manifest '${m.name}': ${at} must be an object.`, at);
    if (typeof tool.name !== "string" || tool.name.length === 0)
      throw invalid(`Manifest '${m.name}': ${at}.name must be a non-empty string.`, `${at}.name`);
    if (seen.has(tool.name))
      throw invalid(`Manifest '${m.name}': tool '${tool.name}' is listed twice.`, `${at}.name`);
    seen.add(tool.name);
    if (!isPlainObject(tool.inputSchema))
      throw invalid(
        `Manifest '${m.name}': ${at}.inputSchema of '${tool.name}' must be a JSON Schema object.`,
        `${at}.inputSchema`,
      );
  });
  let copy: CapabilityManifest;
  try {
    copy = structuredClone(input) as CapabilityManifest;
  } catch (error) {
    throw new CapgateError(
      "invalid_manifest",
      `Manifest '${m.name}' must be plain JSON data: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return deepFreeze(copy);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
