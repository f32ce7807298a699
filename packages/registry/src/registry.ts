import { type CapabilityManifest, signatureFromSchema, type ToolManifest } from "@capgate/schema";
import { isStopWord } from "./analyze.js";
import { DuplicateCapabilityError, InvalidManifestError } from "./errors.js";
import { type Effect, requestEffect, toolEffect } from "./intent.js";
import {
  assertMcpServerName,
  type McpRegistration,
  type McpServerOptions,
  mcpCapabilityName,
  mcpManifest,
} from "./mcp.js";
import { outputText, parameterText } from "./parameter-text.js";
import type { RankerIndex, RankerQuery, SearchRanker } from "./ranker.js";
import { SubstringIndex } from "./substring-index.js";
import { OPERATION_SYNONYMS } from "./synonyms.js";
import { createTextIndex, type TextIndex, type TextQuery } from "./text-index.js";
import { MCP_NAMESPACE, type ValidateManifestOptions, validateManifest } from "./validate-manifest.js";

/** One tool of a hit: how to call it, what it does, how well it fits the query. */
export interface SearchHitTool {
  name: string;
  /** `fs.read(path: string, offset?: integer)`: the exact argument names. */
  signature: string;
  /** The first sentence of the tool's description (at most 160 characters). */
  description: string;
  /** Its relevance to the query, 0 when it shares nothing with it; the tools of a hit are ordered by it. */
  score: number;
}

export interface SearchHit {
  capability: string;
  /** Relevance; higher is better. Hits found only by the substring guarantee score 0. */
  score: number;
  description: string;
  /** Every tool of the capability (at tool level: the one tool), best match for the query first. */
  tools: SearchHitTool[];
  /**
   * Why it is here: `exact` (the query is its name or one of its tools' names), `ranked`
   * (it shares analysed words with the query, or the ranker finds it similar), or
   * `substring` (only the substring recall rule found it; it comes after every ranked hit).
   */
  match: "exact" | "ranked" | "substring";
  /** At tool level only: the tool this hit is about (also `tools[0].name`). */
  tool?: string;
}

export interface SearchOptions {
  /** Most hits to return (default 5). */
  limit?: number;
  /**
   * `capability` (default): capabilities, each with its tools ordered by relevance.
   * `tool`: tools ranked directly across capabilities, one hit per tool.
   */
  level?: "capability" | "tool";
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
  /** Argument names and descriptions of the tools (`path: the file to read`). */
  parameters: number;
}

export const DEFAULT_SEARCH_WEIGHTS: Readonly<SearchWeights> = Object.freeze({
  name: 3,
  tools: 3,
  toolDescriptions: 1.5,
  description: 1,
  profileFit: 0.5,
  // Measured 0.5 and 1.5 level on SGD (whose intents have described slots; MetaTool has
  // none): +1 point of tool-level R@1 over no field. 0.5: arguments describe how to call a
  // tool more than what it is for, so they count less than its description.
  parameters: 0.5,
});

/**
 * BM25+ for capability search: MiniSearch's k and d, with less length normalisation (b 0.5
 * instead of 0.7), so a capability that describes itself at length is penalised less for it.
 * A small gain on MetaTool (R@5 +0.0006 overall, +0.0004 on the 50-tool subsets, never worse
 * on a subset; chosen on two subsets it also wins on the third, both ways round).
 */
const SEARCH_BM25 = { k: 1.2, b: 0.5, d: 0.5 };

/** A tool's own fields in the tool-level index, and its capability's, by weight. */
const TOOL_FIELD_WEIGHTS = {
  name: 3,
  description: 1.5,
  capability: 1,
  capabilityDescription: 0.5,
  parameters: DEFAULT_SEARCH_WEIGHTS.parameters,
};

/** The lexical index over capabilities, as a registry with these field weights keeps it. */
export function createCapabilityIndex(weights: SearchWeights): TextIndex<CapabilityManifest> {
  return createTextIndex<CapabilityManifest>({
    id: (m) => m.name,
    fields: {
      name: (m) => m.name,
      tools: (m) => m.tools.flatMap(toolNames),
      toolDescriptions: (m) => m.tools.map((t) => t.description),
      description: (m) => m.description,
      profileFit: (m) => m.profileFit,
      parameters: (m) => m.tools.flatMap(schemaTexts),
    },
    weights: { ...weights },
    // Tool names are where the number of a noun means something (`list_teams`, `get_team`).
    exactFields: ["tools"],
    bm25: SEARCH_BM25,
    synonyms: OPERATION_SYNONYMS,
  });
}

/** The lexical index over tools (each with its capability as context), as a registry with these field weights keeps it. */
export function createToolIndex(weights: SearchWeights): TextIndex<ToolDoc> {
  return createTextIndex<ToolDoc>({
    id: (d) => d.tool.name,
    fields: {
      name: (d) => toolNames(d.tool),
      description: (d) => d.tool.description,
      capability: (d) => d.capability.name,
      capabilityDescription: (d) => d.capability.description,
      parameters: (d) => schemaTexts(d.tool),
    },
    weights: { ...TOOL_FIELD_WEIGHTS, parameters: weights.parameters },
    exactFields: ["name"],
    bm25: SEARCH_BM25,
    synonyms: OPERATION_SYNONYMS,
  });
}

/** Default share of the ranker in the blend, and the least similarity for a hit the lexical index did not find. */
const DEFAULT_RANKER_WEIGHT = 0.5;
const DEFAULT_MIN_SIMILARITY = 0.5;

/**
 * How fast the ranker's share shrinks as the best lexical hit covers more of the request:
 * the share is `weight · (1 − coverage^4)`. A request whose every word (by IDF) is in one
 * document said what it wants in the index's own words; word vectors cannot see a word's
 * form or order (`list_teams` vs `get_team`), and among near-identical tools their cosines
 * differ by noise. A request the index covers in part (conversational wording) keeps
 * nearly the whole share: 0.8 coverage keeps 59% of it, 0.5 keeps 94%. Measured at powers
 * 2, 4 and 8 on every set (docs/search.md, stop 35): 2 costs SGD's tool level 0.6–0.7 points
 * of R@1, 8 keeps two thirds of what 4 gains on the MCP lists; 4 costs SGD 0.1–0.2 points
 * and MetaTool nothing.
 */
const COVERAGE_POWER = 4;

/** The ranker's share of the blend for a query whose best lexical hit has this coverage. */
export const rankerShare = (weight: number, coverage: number): number =>
  clamp01(weight) * (1 - clamp01(coverage) ** COVERAGE_POWER);

/**
 * Up to this many tools, a capability's tools are told apart by the ranker as much as by
 * their words; in a larger one (an MCP server of 49 or 103 tools), a tool's similarity is
 * pooled with its capability's: `s' = λ·s + (1 − λ)·S`, λ = `SIBLING_TOOLS / tools`. A large
 * server is mostly siblings (`list_teams`, `get_team`, `create_team`, `update_team`), which word
 * vectors cannot tell apart by operation, and whose cosines follow their texts' lengths and
 * argument names instead: five filter arguments put `list_escalation_policies` at 0.19 to
 * "show me all escalation policies", `create_escalation_policy` at 0.68. The vectors still
 * say which server (its similarity S, from the capability index); the words say which tool.
 * Measured at 12, 24 and 48 (docs/search.md): within a point of each other on every set; SGD's
 * services (at most 3 intents) and the built-in capabilities (at most 10 tools) are below it and unchanged.
 */
export const SIBLING_TOOLS = 24;

/** The share of a tool's own similarity in its pooled similarity, for a capability of this many tools. */
export const ownShare = (tools: number): number => (tools <= SIBLING_TOOLS ? 1 : SIBLING_TOOLS / tools);

/**
 * With a ranker, the blend starts from this many of the best lexical hits (at least 4× the
 * hits wanted) plus the ranker's nearest documents, and takes more only when it cannot prove
 * that no other document could still reach the page (see `#blend`).
 */
const RERANK_MIN = 50;

/**
 * A tool whose effect contradicts the request's (`requestEffect`: "create an incident …" and
 * a read-only metrics tool; "show me the policies" and `create_policy`) keeps this share of
 * its score, at tool level and in a hit's tool order. Half: the request's opening verb is strong evidence, but a
 * request's wording can mislead ("show me how to delete…"), so a much better match still
 * wins. Only tools whose authors said whether they read (MCP `readOnlyHint`, a manifest's
 * `risk`) are affected, and only requests that open with a verb of either list.
 */
const EFFECT_MISMATCH = 0.5;

/** A tool's share of its score for a request: `EFFECT_MISMATCH` when their effects contradict, else 1. */
const effectShare = (wanted: Effect | undefined, effect: Effect | undefined): number =>
  wanted !== undefined && effect !== undefined && effect !== wanted ? EFFECT_MISMATCH : 1;

export interface RegistryOptions {
  weights?: Partial<SearchWeights>;
  /** A second ranking signal (e.g. `@capgate/search-semantic`), blended with the lexical score. */
  ranker?: SearchRanker;
}

interface ToolInfo {
  manifest: ToolManifest;
  signature: string;
  summary: string;
  /** Substring-index id of this tool's own text (name and description). */
  segment: number;
  /** Whether it only reads, as its author said (`toolEffect`); undefined when unsaid. */
  effect: Effect | undefined;
}

interface Entry {
  manifest: CapabilityManifest;
  /** The seed's recall haystack: name, description, profileFit, tool names and descriptions, lowercased. */
  haystack: string;
  /** Substring-index id of the capability's own text (name, description, profileFit). */
  segment: number;
  tools: ToolInfo[];
}

/** A document of the tool index: a tool, with the capability it belongs to as context. */
export interface ToolDoc {
  tool: ToolManifest;
  capability: CapabilityManifest;
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

/** A tool's names as search reads them: its short name and, when it has one, its title (`list_incidents`, "List Incidents"). */
function toolNames(tool: ToolManifest): string[] {
  return tool.title ? [shortToolName(tool.name), tool.title] : [shortToolName(tool.name)];
}

/** The words of a tool's schemas: its arguments, and what it returns when it declares an outputSchema. */
function schemaTexts(tool: ToolManifest): string[] {
  const output = outputText(tool);
  return output === "" ? [parameterText(tool)] : [parameterText(tool), output];
}

const SUMMARY_MAX = 160;

/** The first sentence (or line) of a description, at most 160 characters. */
function summaryOf(description: string): string {
  const line = description.split("\n", 1)[0]!.trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length <= SUMMARY_MAX ? sentence : `${sentence.slice(0, SUMMARY_MAX - 1).trimEnd()}…`;
}

/** The first sentence (or line) of a description, whole: what the tool is for. */
function leadSentence(description: string): string {
  const line = description.split("\n", 1)[0]!.trim();
  return /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
}

/** Whitespace words of a query as the recall rule uses them: lowercased, outer punctuation trimmed, stop words and single characters dropped. */
function recallWords(query: string): string[] {
  const out = new Set<string>();
  for (const raw of query.toLowerCase().split(/\s+/)) {
    const w = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
    if (w.length >= 2 && !isStopWord(w)) out.add(w);
  }
  return [...out];
}

/**
 * A ranker query as `#blend` reads it; `ceiling`, when present, bounds the similarity of any
 * document whose own (ranker) similarity is at most `s` — for pooled similarities, which can
 * exceed a document's own.
 */
interface BlendQuery extends RankerQuery {
  ceiling?(s: number): number;
}

interface Scored {
  id: string;
  score: number;
}

const byScore = (a: Scored, b: Scored): number =>
  b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The capability registry: validated manifests by name, and ranked search over them.
 * Registering and unregistering update every index in place (lexical, substring, ranker);
 * nothing is rebuilt.
 */
export class Registry {
  readonly #entries = new Map<string, Entry>();
  /** Lowercased capability and tool names → capability, for "an exact name ranks first". */
  readonly #exact = new Map<string, string>();
  readonly #index: TextIndex<CapabilityManifest>;
  readonly #toolIndex: TextIndex<ToolDoc>;
  /**
   * The recall rule's index, built on the first search that needs it (one whose ranked page
   * is not full): most searches never do, and it is a sixth of the first search's build.
   */
  readonly #substrings = new SubstringIndex();
  #substringsBuilt = false;
  /** Substring-index id → its capability, and its tool when the text is a tool's. */
  readonly #segments = new Map<number, { capability: string; tool?: string }>();
  #nextSegment = 0;
  readonly #ranker: SearchRanker | undefined;
  #capRank: RankerIndex | undefined;
  #toolRank: RankerIndex | undefined;
  /** Capabilities of more than `SIBLING_TOOLS` tools, whose tools' similarities are pooled (`#pooled`). */
  readonly #largeCapabilities = new Set<string>();
  /** Capabilities with a tool whose effect its author stated (`toolEffect`): none, no effect factor. */
  readonly #withEffects = new Set<string>();
  /**
   * Whether the search indexes hold the entries. They are built on the first search, not
   * at registration: a process that only looks tools up and calls them (`capgate call`,
   * the Claude Code hook) never pays for indexing; after that they follow every change.
   */
  #indexed = false;

  constructor(options: RegistryOptions = {}) {
    const weights = { ...DEFAULT_SEARCH_WEIGHTS, ...options.weights };
    this.#index = createCapabilityIndex(weights);
    this.#toolIndex = createToolIndex(weights);
    this.#ranker = options.ranker;
  }

  /** The ranker blended with the lexical score, if one was given. */
  get ranker(): SearchRanker | undefined {
    return this.#ranker;
  }

  /**
   * Add a capability. Throws `InvalidManifestError` (code `invalid_manifest`, every problem
   * listed) or `DuplicateCapabilityError` (code `duplicate_capability`); nothing is added then.
   */
  register(manifest: CapabilityManifest, options: ValidateManifestOptions = {}): void {
    const result = validateManifest(manifest, options);
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
    this.#largeCapabilities.delete(name);
    this.#withEffects.delete(name);
    if (this.#indexed) this.#unindex(entry);
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
   * Capabilities (or, with `level: "tool"`, tools) for a need, best first. An exact
   * capability or tool name comes first; then ranked matches (lexical BM25, blended with
   * the ranker when there is one), each capability's tools ordered by relevance; then (the
   * recall guarantee) what only the substring rule finds, marked `match: "substring"`.
   * Nothing that scores zero on every signal is returned.
   */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const limit = Math.max(0, Math.floor(options.limit ?? 5));
    const text = typeof query === "string" ? query.trim() : "";
    if (limit === 0 || text === "" || this.#entries.size === 0) return [];
    this.#ensureIndexed();
    return options.level === "tool" ? this.#searchTools(text, limit) : this.#searchCapabilities(text, limit);
  }

  #searchCapabilities(text: string, limit: number): SearchHit[] {
    const out: SearchHit[] = [];
    const taken = new Set<string>();
    const q = this.#capRank?.query(text);
    const { ranked } = this.#blend(this.#index.query(text), q, this.#capRank, limit);
    const tools = this.#toolScorer(text, q);
    const exact = this.#exact.get(text.toLowerCase());
    if (exact !== undefined) {
      out.push(this.#hit(exact, (ranked[0]?.score ?? 0) + 1, "exact", tools));
      taken.add(exact);
    }
    for (const { id, score } of ranked) {
      if (out.length >= limit) break;
      if (taken.has(id)) continue;
      out.push(this.#hit(id, score, "ranked", tools));
      taken.add(id);
    }
    // Only when ranking did not fill the page can a substring-only match still make it.
    if (out.length < limit) {
      for (const name of this.#substringCapabilities(text, taken, q)) {
        if (out.length >= limit) break;
        out.push(this.#hit(name, 0, "substring", tools));
      }
    }
    return out;
  }

  #searchTools(text: string, limit: number): SearchHit[] {
    const out: SearchHit[] = [];
    const taken = new Set<string>();
    const raw = this.#toolRank?.query(text);
    const q = raw && this.#largeCapabilities.size > 0 ? this.#pooled(raw, text) : raw;
    const { ranked, scoreOf } = this.#blend(
      this.#toolIndex.query(text),
      q,
      this.#toolRank,
      limit,
      this.#effectFactor(text),
    );
    const lower = text.toLowerCase();
    const exact = this.#exact.get(lower);
    const top = (ranked[0]?.score ?? 0) + 1;
    if (exact !== undefined) {
      const entry = this.#entries.get(exact)!;
      const named = entry.tools.find((t) => t.manifest.name.toLowerCase() === lower);
      // A tool's name: that tool. A capability's name: its tools, best ranked first.
      const order = named
        ? [named]
        : [...entry.tools].sort((a, b) => scoreOf(b.manifest.name) - scoreOf(a.manifest.name));
      for (const t of order) {
        if (out.length >= limit) break;
        out.push(this.#toolHit(exact, t, top, "exact"));
        taken.add(t.manifest.name);
      }
    }
    for (const { id, score } of ranked) {
      if (out.length >= limit) break;
      if (taken.has(id)) continue;
      const found = this.#toolById(id);
      if (!found) continue;
      out.push(this.#toolHit(found.capability, found.tool, score, "ranked"));
      taken.add(id);
    }
    if (out.length < limit) {
      for (const id of this.#substringTools(text, taken, q)) {
        if (out.length >= limit) break;
        const found = this.#toolById(id)!;
        out.push(this.#toolHit(found.capability, found.tool, 0, "substring"));
      }
    }
    return out;
  }

  /**
   * Each tool's share of its score for this request (`EFFECT_MISMATCH` when the tool's effect
   * contradicts the request's, else 1), or undefined when the request's opening says neither.
   */
  #effectFactor(text: string): ((id: string) => number) | undefined {
    const wanted = this.#wantedEffect(text);
    if (wanted === undefined) return undefined;
    return (id) => effectShare(wanted, this.#toolById(id)?.tool.effect);
  }

  /** What the request asks to do (`requestEffect`), read only when some tool says what it does. */
  #wantedEffect(text: string): Effect | undefined {
    return this.#withEffects.size > 0 ? requestEffect(text) : undefined;
  }

  #toolById(name: string): { capability: string; tool: ToolInfo } | undefined {
    const slash = name.indexOf("/");
    const owner = slash > 0 ? `mcp:${name.slice(0, slash)}` : name.slice(0, name.indexOf("."));
    const tool = this.#entries.get(owner)?.tools.find((t) => t.manifest.name === name);
    return tool ? { capability: owner, tool } : undefined;
  }

  /**
   * The best `limit` documents of the lexical scores blended with the ranker's similarity,
   * and any one document's blended score. Lexical scores are scaled to the best lexical hit
   * of this query (so the blend does not depend on BM25's unbounded scale); a document only
   * the ranker finds must be among its `max(20, 2·limit)` nearest and reach `minSimilarity`.
   * The ranker's share is `rankerShare`: smaller the more of the query the best lexical hit covers.
   *
   * Only candidates are blended: the best lexical hits and the ranker's nearest documents,
   * not every document that shares a word with the query. That is exact, not a heuristic:
   * a document outside the candidates has a lexical score at most the last lexical
   * candidate's and a similarity at most the last nearest one's, so its blend is at most
   * their blend; while the `limit`-th candidate does not beat that bound, more candidates
   * are taken (four times as many lexical hits, and nearest documents), up to all of them.
   * The answer is therefore the one blending every document gives, as far as the ranker's
   * nearest list is exact (it is up to 2,048 documents; above, the vector index is approximate).
   */
  #blend(
    lexical: TextQuery,
    q: BlendQuery | undefined,
    rankIndex: RankerIndex | undefined,
    limit: number,
    factor?: (id: string) => number,
  ): { ranked: Scored[]; scoreOf: (id: string) => number } {
    if (!q || !rankIndex) {
      if (!factor) return { ranked: lexical.top(limit), scoreOf: (id) => lexical.score(id) };
      return this.#factoredLexical(lexical, limit, factor);
    }
    const weight = rankerShare(this.#ranker?.weight ?? DEFAULT_RANKER_WEIGHT, lexical.coverage);
    const minSimilarity = this.#ranker?.minSimilarity ?? DEFAULT_MIN_SIMILARITY;
    const best = lexical.best;
    const blendLexical = (id: string, s: number): number =>
      ((1 - weight) * (s / best) + weight * Math.max(0, q.similarity(id) ?? 0)) * (factor?.(id) ?? 1);
    const admit = Math.max(20, 2 * limit);
    let nearest = q.nearest(admit);
    /** Documents only the ranker finds (no lexical score), admitted by the rule above. */
    const similarOnly = new Map<string, number>();
    for (const { id, similarity } of nearest) {
      if (lexical.score(id) > 0 || similarity < minSimilarity) continue;
      const score =
        weight * (q.ceiling ? Math.max(0, q.similarity(id) ?? 0) : similarity) * (factor?.(id) ?? 1);
      if (score > 0) similarOnly.set(id, score);
    }
    const scoreOf = (id: string): number => {
      const s = lexical.score(id);
      return s > 0 ? blendLexical(id, s) : (similarOnly.get(id) ?? 0);
    };
    let depth = Math.min(lexical.size, Math.max(RERANK_MIN, 4 * limit));
    let reach = admit;
    for (;;) {
      const candidates = new Map(similarOnly);
      const top = lexical.top(depth);
      for (const h of top) candidates.set(h.id, blendLexical(h.id, h.score));
      // A lexical match beyond the first `depth` that the ranker finds close is scored too.
      for (const { id } of nearest) {
        if (candidates.has(id)) continue;
        const s = lexical.score(id);
        if (s > 0) candidates.set(id, blendLexical(id, s));
      }
      const ranked: Scored[] = [];
      for (const [id, score] of candidates) if (score > 0) ranked.push({ id, score });
      ranked.sort(byScore);
      // Every lexical match is a candidate, or every document is among the nearest: exact.
      if (depth >= lexical.size || nearest.length >= rankIndex.size)
        return { ranked: ranked.slice(0, limit), scoreOf };
      // Any other document: lexically at most the last lexical candidate, and in similarity
      // at most the last of the ranker's nearest (exactly so for an exact ranker; an
      // approximate one returning fewer than asked has looked at no more than that), or, for
      // pooled similarities, at most what `ceiling` makes of that.
      const nearestBound = Math.max(0, nearest[nearest.length - 1]?.similarity ?? 0);
      const similarityBound = q.ceiling ? q.ceiling(nearestBound) : nearestBound;
      const bound = (1 - weight) * (top[top.length - 1]!.score / best) + weight * similarityBound;
      if (ranked.length >= limit && ranked[limit - 1]!.score > bound)
        return { ranked: ranked.slice(0, limit), scoreOf };
      depth = Math.min(lexical.size, depth * 4);
      if (nearest.length >= reach) {
        reach *= 4;
        nearest = q.nearest(reach);
      }
    }
  }

  /**
   * The best `limit` lexical hits with each score multiplied by `factor` (≤ 1), exactly: more
   * hits are taken until the `limit`-th factored score beats the last unfactored one, which
   * bounds every hit not yet taken.
   */
  #factoredLexical(
    lexical: TextQuery,
    limit: number,
    factor: (id: string) => number,
  ): { ranked: Scored[]; scoreOf: (id: string) => number } {
    const scoreOf = (id: string): number => lexical.score(id) * factor(id);
    let depth = Math.min(lexical.size, Math.max(RERANK_MIN, 4 * limit));
    for (;;) {
      const top = lexical.top(depth);
      const ranked = top.map((h) => ({ id: h.id, score: h.score * factor(h.id) })).sort(byScore);
      if (
        depth >= lexical.size ||
        (ranked.length >= limit && ranked[limit - 1]!.score > top[top.length - 1]!.score)
      )
        return { ranked: ranked.slice(0, limit), scoreOf };
      depth = Math.min(lexical.size, depth * 4);
    }
  }

  /**
   * The tool query with each tool's similarity pooled with its capability's (`ownShare`),
   * for tools of capabilities larger than `SIBLING_TOOLS`; others keep their own. The
   * capability similarities come from the capability index, once per capability a query
   * reaches; `ceiling` bounds a tool's pooled similarity by any large capability's.
   */
  #pooled(q: RankerQuery, text: string): BlendQuery {
    const capabilities = this.#capRank?.query(text);
    const known = new Map<string, number>();
    const similarityOf = (capability: string): number => {
      let s = known.get(capability);
      if (s === undefined) {
        s = Math.max(0, capabilities?.similarity(capability) ?? 0);
        known.set(capability, s);
      }
      return s;
    };
    const pool = (capability: string, own: number): number => {
      const entry = this.#entries.get(capability);
      const share = entry ? ownShare(entry.tools.length) : 1;
      return share === 1 ? own : share * own + (1 - share) * similarityOf(capability);
    };
    return {
      nearest: (k) => q.nearest(k),
      similarity: (id) => {
        const own = q.similarity(id);
        if (own === undefined) return undefined;
        const owner = this.#toolById(id)?.capability;
        return owner === undefined ? own : pool(owner, Math.max(0, own));
      },
      ceiling: (s) => {
        let out = s;
        for (const capability of this.#largeCapabilities) out = Math.max(out, pool(capability, s));
        return out;
      },
    };
  }

  /**
   * Orders a hit's tools by relevance: lexical over the tool index (scaled to the best tool
   * of that capability), blended with the ranker at the share `rankerShare` gives that best
   * tool's coverage; tools that share nothing with the query keep their manifest order after
   * the others.
   */
  #toolScorer(text: string, capabilities: RankerQuery | undefined): (entry: Entry) => SearchHitTool[] {
    // Only a few known tools are compared: no whole-index refinement of the query.
    const q = this.#toolRank?.query(text, { refine: false });
    const wanted = this.#wantedEffect(text);
    return (entry) => {
      // In a large capability, each tool's similarity is pooled with the capability's (`ownShare`).
      const share = ownShare(entry.tools.length);
      const pooled =
        share < 1 ? (1 - share) * Math.max(0, capabilities?.similarity(entry.manifest.name) ?? 0) : 0;
      // Only this capability's tools are scored: no search over every tool.
      const lexical = this.#toolIndex.scoresOf(
        text,
        entry.tools.map((t) => t.manifest.name),
      );
      // The ranker's share as in `#blend`, by how much of the query this capability's best tool holds.
      const weight = q ? rankerShare(this.#ranker?.weight ?? DEFAULT_RANKER_WEIGHT, lexical.coverage) : 0;
      let best = 0;
      for (const t of entry.tools) best = Math.max(best, lexical.get(t.manifest.name) ?? 0);
      const scored = entry.tools.map((t, i) => {
        const lex = best > 0 ? (lexical.get(t.manifest.name) ?? 0) / best : 0;
        const sim = q ? share * Math.max(0, q.similarity(t.manifest.name) ?? 0) + pooled : 0;
        return { t, i, score: ((1 - weight) * lex + weight * sim) * effectShare(wanted, t.effect) };
      });
      scored.sort((x, y) => y.score - x.score || x.i - y.i);
      return scored.map(({ t, score }) => ({
        name: t.manifest.name,
        signature: t.signature,
        description: t.summary,
        score,
      }));
    };
  }

  #hit(
    name: string,
    score: number,
    match: SearchHit["match"],
    orderTools: (entry: Entry) => SearchHitTool[],
  ): SearchHit {
    const entry = this.#entries.get(name)!;
    return {
      capability: name,
      score,
      description: entry.manifest.description,
      tools: orderTools(entry),
      match,
    };
  }

  #toolHit(capability: string, tool: ToolInfo, score: number, match: SearchHit["match"]): SearchHit {
    const entry = this.#entries.get(capability)!;
    return {
      capability,
      score,
      description: entry.manifest.description,
      tools: [{ name: tool.manifest.name, signature: tool.signature, description: tool.summary, score }],
      match,
      tool: tool.manifest.name,
    };
  }

  #add(manifest: CapabilityManifest): void {
    const frozen = deepFreeze(manifest);
    const own = [frozen.name, frozen.description, ...frozen.profileFit].join("\n").toLowerCase();
    const fromMcp = frozen.name.startsWith(MCP_NAMESPACE);
    const tools: ToolInfo[] = frozen.tools.map((t) => ({
      manifest: t,
      signature: signatureFromSchema(t.name, t.inputSchema),
      summary: summaryOf(t.description),
      segment: -1,
      effect: toolEffect(t, fromMcp),
    }));
    const haystack = [own, ...frozen.tools.map((t) => `${t.name}\n${t.description}`.toLowerCase())].join(
      "\n",
    );
    const entry: Entry = { manifest: frozen, haystack, segment: -1, tools };
    this.#entries.set(frozen.name, entry);
    if (ownShare(tools.length) < 1) this.#largeCapabilities.add(frozen.name);
    if (tools.some((t) => t.effect !== undefined)) this.#withEffects.add(frozen.name);
    for (const key of this.#exactKeys(frozen)) {
      if (!this.#exact.has(key)) this.#exact.set(key, frozen.name);
    }
    if (this.#indexed) this.#indexEntry(entry);
  }

  /** Build the search indexes from every entry, in registration order (first search only). */
  #ensureIndexed(): void {
    if (this.#indexed) return;
    this.#indexed = true;
    this.#capRank = this.#ranker?.createIndex();
    this.#toolRank = this.#ranker?.createIndex();
    for (const entry of this.#entries.values()) this.#indexEntry(entry);
  }

  #indexEntry(entry: Entry): void {
    const frozen = entry.manifest;
    entry.segment = this.#nextSegment++;
    this.#segments.set(entry.segment, { capability: frozen.name });
    for (const t of entry.tools) {
      t.segment = this.#nextSegment++;
      this.#segments.set(t.segment, { capability: frozen.name, tool: t.manifest.name });
    }
    if (this.#substringsBuilt) this.#addSubstrings(entry);
    this.#index.add(frozen);
    for (const t of frozen.tools) this.#toolIndex.add({ tool: t, capability: frozen });
    if (this.#capRank) {
      this.#capRank.add({
        id: frozen.name,
        texts: [
          frozen.name,
          ...frozen.tools.flatMap(toolNames),
          frozen.description,
          ...frozen.tools.map((t) => t.description),
          ...frozen.profileFit,
        ],
      });
    }
    if (this.#toolRank) {
      for (const t of frozen.tools) {
        this.#toolRank.add({
          id: t.name,
          texts: [
            ...toolNames(t),
            // What the tool is for: its lead sentence. Siblings of one server (`list_teams`,
            // `get_team`, `create_team`) share most of their longer descriptions, which would
            // make their vectors near-identical and let length, not purpose, order them.
            leadSentence(t.description),
            frozen.name,
            ...schemaTexts(t),
          ],
        });
      }
    }
  }

  /** An entry's texts in the recall rule's index: its own, and each tool's (ids ascend with registration). */
  #addSubstrings(entry: Entry): void {
    const m = entry.manifest;
    this.#substrings.add(entry.segment, [m.name, m.description, ...m.profileFit].join("\n").toLowerCase());
    for (const t of entry.tools)
      this.#substrings.add(t.segment, `${t.manifest.name}\n${t.manifest.description}`.toLowerCase());
  }

  /** The recall rule's index, every indexed entry in it (built on first use). */
  #substringIndex(): SubstringIndex {
    if (!this.#substringsBuilt) {
      this.#substringsBuilt = true;
      // Registration order is segment order: the index takes ascending ids.
      for (const entry of this.#entries.values()) this.#addSubstrings(entry);
    }
    return this.#substrings;
  }

  #unindex(entry: Entry): void {
    const name = entry.manifest.name;
    this.#index.remove(name);
    this.#capRank?.remove(name);
    for (const segment of [entry.segment, ...entry.tools.map((t) => t.segment)]) {
      this.#substrings.remove(segment);
      this.#segments.delete(segment);
    }
    for (const t of entry.tools) {
      this.#toolIndex.remove(t.manifest.name);
      this.#toolRank?.remove(t.manifest.name);
    }
  }

  #exactKeys(manifest: CapabilityManifest): string[] {
    return [manifest.name, ...manifest.tools.map((t) => t.name)].map((n) => n.toLowerCase());
  }

  /**
   * The recall rule, answered from the substring index: for each informative word of the
   * query (not a stop word, 2+ characters), the capabilities whose haystack contains it.
   * Best first: the whole query occurs; more of the words occur; more similar (when a ranker
   * is set); the longer haystack (a capability that says more about itself); then by name.
   */
  #substringCapabilities(text: string, exclude: ReadonlySet<string>, q: RankerQuery | undefined): string[] {
    const counts = new Map<string, number>();
    for (const word of recallWords(text)) {
      const caps = new Set<string>();
      for (const seg of this.#substringIndex().containing(word))
        caps.add(this.#segments.get(seg)!.capability);
      for (const c of caps) if (!exclude.has(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    const whole = text.toLowerCase();
    const found = [...counts].map(([name, words]) => {
      const hay = this.#entries.get(name)!.haystack;
      return {
        name,
        whole: /\s/.test(whole) && hay.includes(whole),
        words,
        sim: q?.similarity(name) ?? 0,
        length: hay.length,
      };
    });
    return found
      .sort(
        (a, b) =>
          Number(b.whole) - Number(a.whole) ||
          b.words - a.words ||
          b.sim - a.sim ||
          b.length - a.length ||
          (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
      )
      .map((f) => f.name);
  }

  /** The recall rule at tool level: a tool matches when its own text or its capability's contains a word. */
  #substringTools(text: string, exclude: ReadonlySet<string>, q: RankerQuery | undefined): string[] {
    const counts = new Map<string, number>();
    for (const word of recallWords(text)) {
      const tools = new Set<string>();
      for (const seg of this.#substringIndex().containing(word)) {
        const owner = this.#segments.get(seg)!;
        if (owner.tool !== undefined) tools.add(owner.tool);
        else for (const t of this.#entries.get(owner.capability)!.tools) tools.add(t.manifest.name);
      }
      for (const t of tools) if (!exclude.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    return [...counts]
      .map(([name, words]) => ({ name, words, sim: q?.similarity(name) ?? 0 }))
      .sort((a, b) => b.words - a.words || b.sim - a.sim || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((f) => f.name);
  }
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : DEFAULT_RANKER_WEIGHT;
}
