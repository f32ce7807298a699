import type { CapabilityManifest, JsonSchema } from "@capgate/schema";
import { seededRandom } from "./random.js";

// A deterministic vocabulary for synthetic registries: real English words, so analysis
// (stemming, stop words) does the same work it does on real manifests.
const VERBS = [
  "read",
  "write",
  "list",
  "search",
  "create",
  "delete",
  "update",
  "fetch",
  "send",
  "convert",
  "translate",
  "summarize",
  "analyze",
  "export",
  "import",
  "schedule",
  "monitor",
  "deploy",
  "build",
  "test",
  "render",
  "resize",
  "compress",
  "extract",
  "validate",
  "merge",
  "split",
  "sync",
  "archive",
  "restore",
  "query",
  "index",
  "tag",
  "rank",
  "compare",
  "plot",
  "encode",
  "decode",
  "sign",
  "verify",
];
const NOUNS = [
  "file",
  "folder",
  "invoice",
  "calendar",
  "event",
  "email",
  "message",
  "ticket",
  "issue",
  "commit",
  "branch",
  "image",
  "video",
  "audio",
  "podcast",
  "recipe",
  "flight",
  "hotel",
  "weather",
  "forecast",
  "stock",
  "price",
  "portfolio",
  "contract",
  "document",
  "spreadsheet",
  "chart",
  "report",
  "database",
  "table",
  "record",
  "customer",
  "order",
  "product",
  "review",
  "playlist",
  "song",
  "article",
  "paper",
  "citation",
  "map",
  "route",
  "address",
  "location",
  "sensor",
  "device",
  "container",
  "cluster",
  "secret",
  "certificate",
  "log",
  "metric",
  "alert",
  "dashboard",
  "survey",
  "form",
  "course",
  "lesson",
  "quiz",
  "translation",
  "subtitle",
  "caption",
  "thumbnail",
  "font",
  "color",
  "palette",
  "layout",
  "page",
  "website",
  "domain",
  "package",
  "dependency",
  "license",
  "vulnerability",
  "backup",
  "snapshot",
  "volume",
  "queue",
  "job",
  "workflow",
];
const ADJECTIVES = [
  "remote",
  "local",
  "shared",
  "private",
  "public",
  "archived",
  "recent",
  "large",
  "small",
  "encrypted",
  "scheduled",
  "daily",
  "weekly",
  "monthly",
  "draft",
  "final",
  "new",
  "old",
  "active",
  "pending",
];
const PARAMS: Array<[string, JsonSchema]> = [
  ["path", { type: "string" }],
  ["id", { type: "string" }],
  ["query", { type: "string" }],
  ["limit", { type: "integer", minimum: 1, maximum: 100 }],
  ["offset", { type: "integer", minimum: 0 }],
  ["url", { type: "string" }],
  ["text", { type: "string" }],
  ["format", { type: "string", enum: ["json", "csv", "text"] }],
  ["tags", { type: "array", items: { type: "string" } }],
  ["recursive", { type: "boolean" }],
  ["timeout_ms", { type: "integer", minimum: 1 }],
  ["language", { type: "string" }],
  ["since", { type: "string" }],
  ["until", { type: "string" }],
  ["owner", { type: "string" }],
  ["name", { type: "string" }],
  ["options", { type: "object", additionalProperties: false, properties: { dry_run: { type: "boolean" } } }],
];

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)]!;
}

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ter",
  "van",
  "shu",
  "ri",
  "pel",
  "dor",
  "ne",
  "quo",
  "zan",
  "bi",
  "tro",
  "fa",
  "gle",
  "mon",
  "sy",
  "wex",
  "ul",
];

/**
 * A Zipf-like vocabulary: the real words above first (the frequent head), then 8,000
 * pronounceable made-up words (the long tail of product names, jargon and identifiers real
 * registries have). Word r is drawn with probability ∝ 1 / r^1.05.
 */
const VOCABULARY: readonly string[] = (() => {
  const words = [...new Set([...VERBS, ...NOUNS, ...ADJECTIVES])];
  const seen = new Set(words);
  const random = seededRandom(99);
  while (words.length < 8000 + VERBS.length + NOUNS.length) {
    const n = 2 + Math.floor(random() * 3);
    let w = "";
    for (let i = 0; i < n; i++) w += pick(SYLLABLES, random);
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
})();
const CDF: Float64Array = (() => {
  const out = new Float64Array(VOCABULARY.length);
  let sum = 0;
  for (let r = 0; r < VOCABULARY.length; r++) out[r] = sum += 1 / (r + 1) ** 1.05;
  for (let r = 0; r < out.length; r++) out[r]! /= sum;
  return out;
})();

/** A word drawn from the Zipf-like vocabulary. */
function zipf(random: () => number): string {
  const u = random();
  let lo = 0;
  let hi = CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CDF[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo]!;
}

function schemaFor(random: () => number): JsonSchema {
  // 1–3 arguments from a shared pool: 10,000 tools share about a thousand distinct shapes,
  // as real registries reuse `path`, `query`, `id`, `limit` ….
  const count = 1 + Math.floor(random() * 3);
  const properties: Record<string, JsonSchema> = {};
  while (Object.keys(properties).length < count) {
    const [key, schema] = pick(PARAMS, random);
    properties[key] = schema;
  }
  const keys = Object.keys(properties);
  return {
    type: "object",
    additionalProperties: false,
    properties,
    required: keys.slice(0, 1),
  };
}

/** `count` deterministic capability manifests with `toolsEach` tools each, words drawn from a Zipf-like vocabulary. */
export function syntheticManifests(count: number, toolsEach: number, seed = 42): CapabilityManifest[] {
  const random = seededRandom(seed);
  const out: CapabilityManifest[] = [];
  for (let c = 0; c < count; c++) {
    const topic = zipf(random);
    const name = `${topic}_${String(c).padStart(4, "0")}`;
    const tools = [];
    const verbs = new Set<string>();
    while (verbs.size < toolsEach) verbs.add(`${pick(VERBS, random)}_${zipf(random)}`);
    for (const verb of verbs) {
      const [action, object] = verb.split("_") as [string, string];
      tools.push({
        name: `${name}.${verb}`,
        description:
          `${action[0]!.toUpperCase()}${action.slice(1)} a ${zipf(random)} ${object} in the ${topic} service. ` +
          `Use it when you need the ${zipf(random)} of a ${object}; for many ${object}s at once prefer ` +
          `the ${pick(VERBS, random)} tool. Returns the ${zipf(random)} ${zipf(random)} as JSON.`,
        inputSchema: schemaFor(random),
      });
    }
    out.push({
      name,
      version: "1.0.0",
      description: `Work with ${zipf(random)} ${topic}s and their ${zipf(random)} ${zipf(random)}s.`,
      profileFit: random() < 0.5 ? ["Coder"] : ["Researcher"],
      tools,
    });
  }
  return out;
}

/** Deterministic search queries over the same Zipf-like vocabulary, including a few exact tool names. */
export function syntheticQueries(
  manifests: readonly CapabilityManifest[],
  count: number,
  seed = 7,
): string[] {
  const random = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const kind = random();
    if (kind < 0.1) {
      const m = pick(manifests, random);
      out.push(pick(m.tools, random).name);
    } else if (kind < 0.5) {
      out.push(`${pick(VERBS, random)} ${zipf(random)}s`);
    } else if (kind < 0.8) {
      out.push(`${pick(VERBS, random)} the ${zipf(random)} ${zipf(random)} of a ${zipf(random)}`);
    } else {
      out.push(`how do I ${pick(VERBS, random)} ${zipf(random)} ${zipf(random)} ${zipf(random)}`);
    }
  }
  return out;
}
