import { type CapabilityManifest, signatureFromSchema, type ToolManifest } from "@capgate/schema";
import { analyze } from "./analyze.js";
import { DuplicateCapabilityError, InvalidManifestError } from "./errors.js";
import {
  assertMcpServerName,
  type McpRegistration,
  type McpServerOptions,
  mcpCapabilityName,
  mcpManifest,
} from "./mcp.js";
import { createTextIndex, type TextIndex } from "./text-index.js";
import { validateManifest } from "./validate-manifest.js";

export interface SearchHit {
  capability: string;
  /** Relevance; higher is better. Hits found only by the substring guarantee score 0. */
  score: number;
  description: string;
  tools: Array<{ name: string; signature: string }>;
}

export interface SearchOptions {
  /** Most hits to return (default 5). */
  limit?: number;
}

/** Relative weight of each part of a manifest in ranking. */
export interface SearchWeights {
  /** The capability name (`fs`, `mcp:github`). */
  name: number;
  /** Tool names without the capability prefix (`read`, `create_issue`). */
  tools: number;
  /** Tool descriptions. */
  toolDescriptions: number;
  /** The capability description. */
  description: number;
  /** profileFit entries. */
  profileFit: number;
}

export const DEFAULT_SEARCH_WEIGHTS: Readonly<SearchWeights> = Object.freeze({
  name: 3,
  tools: 3,
  toolDescriptions: 1.5,
  description: 1,
  profileFit: 0.5,
});

/**
 * BM25+ for capability search: MiniSearch's k and d, with less length normalisation (b 0.5
 * instead of 0.7), so a capability that describes itself at length is penalised less for it.
 * A small gain on MetaTool (R@5 +0.0006 overall, +0.0004 on the 50-tool subsets, never worse
 * on a subset; chosen on two subsets it also wins on the third, both ways round).
 */
const SEARCH_BM25 = { k: 1.2, b: 0.5, d: 0.5 };

/**
 * In the recall fallback, a query word counts as present when the first this-many characters
 * of its stem occur in the haystack (`weather` → `weat`, also inside `weatherforecast`).
 * Measured on MetaTool's 50-tool subsets: 4 ≥ 5 > 6 (the whole stem).
 */
const FALLBACK_STEM_CHARS = 4;

export interface RegistryOptions {
  weights?: Partial<SearchWeights>;
}

interface Entry {
  manifest: CapabilityManifest;
  /** The seed's recall haystack: name, description, profileFit, tool names and descriptions, lowercased. */
  haystack: string;
  signatures: Array<{ name: string; signature: string }>;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** `fs.read` → `read`, `github/create_issue` → `create_issue`. */
function shortToolName(name: string): string {
  const slash = name.indexOf("/");
  if (slash !== -1) return name.slice(slash + 1);
  const dot = name.indexOf(".");
  return dot === -1 ? name : name.slice(dot + 1);
}

/**
 * The capability registry: validated manifests by name, and ranked search over them.
 * Registering and unregistering update the search index in place; nothing is rebuilt.
 */
export class Registry {
  readonly #entries = new Map<string, Entry>();
  /** Lowercased capability and tool names → capability, for "an exact name ranks first". */
  readonly #exact = new Map<string, string>();
  readonly #index: TextIndex<CapabilityManifest>;

  constructor(options: RegistryOptions = {}) {
    const weights = { ...DEFAULT_SEARCH_WEIGHTS, ...options.weights };
    this.#index = createTextIndex<CapabilityManifest>({
      id: (m) => m.name,
      fields: {
        name: (m) => m.name,
        tools: (m) => m.tools.map((t) => shortToolName(t.name)),
        toolDescriptions: (m) => m.tools.map((t) => t.description),
        description: (m) => m.description,
        profileFit: (m) => m.profileFit,
      },
      weights: { ...weights },
      bm25: SEARCH_BM25,
    });
  }

  /**
   * Add a capability. Throws `InvalidManifestError` (code `invalid_manifest`, every problem
   * listed) or `DuplicateCapabilityError` (code `duplicate_capability`); nothing is added then.
   */
  register(manifest: CapabilityManifest): void {
    const result = validateManifest(manifest);
    if (!result.ok) {
      const name = typeof manifest?.name === "string" ? manifest.name : undefined;
      throw new InvalidManifestError(name, result.problems);
    }
    if (this.#entries.has(manifest.name)) throw new DuplicateCapabilityError(manifest.name);
    this.#add(structuredClone(manifest));
  }

  /** Remove a capability (native or `mcp:<server>`); false when it was not registered. */
  unregister(name: string): boolean {
    const entry = this.#entries.get(name);
    if (!entry) return false;
    this.#entries.delete(name);
    this.#index.remove(name);
    for (const key of this.#exactKeys(entry.manifest)) {
      if (this.#exact.get(key) !== name) continue;
      this.#exact.delete(key);
      // Names differing only in case (mcp:A, mcp:a) may share a key: hand it to the next owner.
      for (const other of this.#entries.values()) {
        if (this.#exactKeys(other.manifest).includes(key)) {
          this.#exact.set(key, other.manifest.name);
          break;
        }
      }
    }
    return true;
  }

  get(name: string): CapabilityManifest | undefined {
    return this.#entries.get(name)?.manifest;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** A tool by its full name: `fs.read` in capability `fs`, `github/create_issue` in `mcp:github`. */
  tool(name: string): ToolManifest | undefined {
    const slash = name.indexOf("/");
    const owner = slash > 0 ? `mcp:${name.slice(0, slash)}` : name.slice(0, name.indexOf("."));
    return this.get(owner)?.tools.find((t) => t.name === name);
  }

  /** Every registered manifest, sorted by name. */
  list(): CapabilityManifest[] {
    return [...this.#entries.keys()].sort().map((name) => this.#entries.get(name)!.manifest);
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Register (or, on refresh, replace) the tools of an MCP server as the capability
   * `mcp:<server>` with tools `<server>/<tool>`. Tools with unusable names or schemas are
   * skipped and reported; descriptions are sanitised. The namespace means an MCP tool can
   * never shadow a native one. A server whose every tool was skipped is not registered.
   */
  registerMcpServer(
    server: string,
    tools: readonly unknown[],
    options: McpServerOptions = {},
  ): McpRegistration {
    assertMcpServerName(server);
    const { manifest, skipped } = mcpManifest(server, tools, options);
    this.unregister(manifest.name);
    if (manifest.tools.length > 0) this.#add(manifest);
    return { capability: manifest.name, tools: manifest.tools.map((t) => t.name), skipped };
  }

  unregisterMcpServer(server: string): boolean {
    assertMcpServerName(server);
    return this.unregister(mcpCapabilityName(server));
  }

  /**
   * Capabilities for a need, best first. A capability whose name or one of whose tool names
   * is the query comes first; then BM25-ranked matches; then (the recall guarantee) any
   * capability whose haystack contains the whole query or one of its words.
   */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const limit = Math.max(0, Math.floor(options.limit ?? 5));
    const text = typeof query === "string" ? query.trim() : "";
    if (limit === 0 || text === "" || this.#entries.size === 0) return [];

    const order: Array<{ name: string; score: number }> = [];
    const taken = new Set<string>();
    const ranked = this.#index.search(text, limit + 1);
    const exact = this.#exact.get(text.toLowerCase());
    if (exact !== undefined) {
      order.push({ name: exact, score: (ranked[0]?.score ?? 0) + 1 });
      taken.add(exact);
    }
    for (const hit of ranked) {
      if (order.length >= limit) break;
      if (taken.has(hit.id)) continue;
      order.push({ name: hit.id, score: hit.score });
      taken.add(hit.id);
    }
    // Only when ranking did not fill the page can a substring-only match still make it.
    if (order.length < limit) {
      for (const name of this.#substringMatches(text, taken)) {
        if (order.length >= limit) break;
        order.push({ name, score: 0 });
      }
    }
    return order.slice(0, limit).map(({ name, score }) => {
      const entry = this.#entries.get(name)!;
      return {
        capability: name,
        score,
        description: entry.manifest.description,
        tools: entry.signatures.map((s) => ({ ...s })),
      };
    });
  }

  #add(manifest: CapabilityManifest): void {
    const frozen = deepFreeze(manifest);
    const haystack = [
      frozen.name,
      frozen.description,
      ...frozen.profileFit,
      ...frozen.tools.flatMap((t) => [t.name, t.description]),
    ]
      .join("\n")
      .toLowerCase();
    const signatures = frozen.tools.map((t) => ({
      name: t.name,
      signature: signatureFromSchema(t.name, t.inputSchema),
    }));
    this.#index.add(frozen);
    this.#entries.set(frozen.name, { manifest: frozen, haystack, signatures });
    for (const key of this.#exactKeys(frozen)) {
      if (!this.#exact.has(key)) this.#exact.set(key, frozen.name);
    }
  }

  #exactKeys(manifest: CapabilityManifest): string[] {
    return [manifest.name, ...manifest.tools.map((t) => t.name)].map((n) => n.toLowerCase());
  }

  /**
   * The seed's recall guarantee: the whole lowercased query, or any whitespace-separated
   * word of it, occurs in the haystack. Which capabilities match is the seed's rule; their
   * order is ours. Best first: the whole query occurs; more of the query's content words
   * occur (analysed, stop words dropped, stem cut to 4 characters, anywhere in the haystack);
   * more of its raw words occur; the longer haystack (a capability that says more about
   * itself); then by name.
   */
  #substringMatches(query: string, exclude: ReadonlySet<string>): string[] {
    const whole = query.toLowerCase();
    const words = [...new Set(whole.split(/\s+/).filter((w) => w !== ""))];
    const content = [...new Set(analyze(query).map((t) => t.slice(0, FALLBACK_STEM_CHARS)))];
    const found: Array<{ name: string; whole: boolean; content: number; words: number; length: number }> = [];
    for (const [name, entry] of this.#entries) {
      if (exclude.has(name)) continue;
      const hay = entry.haystack;
      const hasWhole = hay.includes(whole);
      let count = 0;
      for (const w of words) if (hay.includes(w)) count++;
      if (!hasWhole && count === 0) continue;
      let contentCount = 0;
      for (const c of content) if (hay.includes(c)) contentCount++;
      found.push({ name, whole: hasWhole, content: contentCount, words: count, length: hay.length });
    }
    return found
      .sort(
        (a, b) =>
          Number(b.whole) - Number(a.whole) ||
          b.content - a.content ||
          b.words - a.words ||
          b.length - a.length ||
          (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
      )
      .map((f) => f.name);
  }
}
