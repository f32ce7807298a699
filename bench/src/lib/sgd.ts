import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { CapabilityManifest, JsonSchema } from "@capgate/schema";
import type { RetrievalSet } from "./retrieval.js";

/**
 * The Schema-Guided Dialogue dataset (Rastogi et al., 2020; google-research-datasets/
 * dstc8-schema-guided-dialogue, CC BY-SA 4.0) as a tool-retrieval set: each service of a
 * split's schema is a capability, each of its intents a tool (the intent's description,
 * its slots as arguments). A query is a user turn that starts a new intent — written by
 * crowd workers, who paraphrased every generated dialogue turn in their own words — and its
 * answer is that intent. Sibling services of one domain (Restaurants_1, Restaurants_2) often
 * offer an intent of the same name; a user's words cannot tell them apart, so every tool of
 * that domain with that intent name counts as right (and at capability level, every such
 * service). The bench reads the extract in bench/data/sgd (each split's schema and the user
 * turns that start an intent, made by bench/scripts/extract-sgd.mjs; CC BY-SA 4.0 like its
 * source); `$CAPGATE_SGD_DIR` points at another extract directory instead.
 */

interface SgdSlot {
  name: string;
  description: string;
}
interface SgdIntent {
  name: string;
  description: string;
  required_slots: string[];
  optional_slots: Record<string, string>;
}
interface SgdService {
  service_name: string;
  description: string;
  slots: SgdSlot[];
  intents: SgdIntent[];
}
/** What bench/scripts/extract-sgd.mjs writes: `starts` are [utterance, service, intent]. */
interface SgdBundle {
  files: string[];
  services: SgdService[];
  starts: Array<[string, string, string]>;
}

const snake = (s: string): string =>
  s
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");

/** `$CAPGATE_SGD_DIR`, else the extract committed in bench/data/sgd. */
export function sgdDir(): string {
  return (
    process.env.CAPGATE_SGD_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "data", "sgd")
  );
}

export function loadSgd(split: "test" | "dev"): RetrievalSet | { missing: string } {
  const path = join(sgdDir(), `${split}.json.gz`);
  if (!existsSync(path)) return { missing: `${path} not found (see bench/data/README.md)` };
  const { files, services, starts } = JSON.parse(
    gunzipSync(readFileSync(path)).toString("utf8"),
  ) as SgdBundle;
  const manifests: CapabilityManifest[] = [];
  const toolOf = new Map<string, string>(); // "Service|Intent" → tool name
  const domainIntent = new Map<string, { tools: Set<string>; capabilities: Set<string> }>();
  for (const s of [...services].sort((a, b) => (a.service_name < b.service_name ? -1 : 1))) {
    const cap = snake(s.service_name);
    const slotDescription = new Map(s.slots.map((x) => [x.name, x.description]));
    const tools = s.intents.map((intent) => {
      const name = `${cap}.${snake(intent.name)}`;
      toolOf.set(`${s.service_name}|${intent.name}`, name);
      const key = `${s.service_name.split("_")[0]}|${intent.name}`;
      const group = domainIntent.get(key) ?? { tools: new Set(), capabilities: new Set() };
      group.tools.add(name);
      group.capabilities.add(cap);
      domainIntent.set(key, group);
      const slots = [...intent.required_slots, ...Object.keys(intent.optional_slots)];
      const properties: Record<string, JsonSchema> = {};
      for (const slot of slots) {
        properties[slot] = { type: "string", description: slotDescription.get(slot) ?? slot };
      }
      return {
        name,
        description: intent.description,
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties,
          required: intent.required_slots,
        } as JsonSchema,
      };
    });
    manifests.push({ name: cap, version: "1.0.0", description: s.description, profileFit: [], tools });
  }

  const queries: RetrievalSet["queries"] = [];
  const seen = new Set<string>();
  for (const [utterance, service, intent] of starts) {
    const group = domainIntent.get(`${service.split("_")[0]}|${intent}`);
    if (!group || !toolOf.has(`${service}|${intent}`)) continue;
    const key = `${utterance}\u0000${[...group.tools].join(",")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    queries.push({ query: utterance, capabilities: group.capabilities, tools: group.tools });
  }
  return { name: `sgd-${split}`, manifests, queries, note: `${files.length} dialogue files` };
}
