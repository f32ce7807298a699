import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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
 * service). Data is not shipped: set CAPGATE_SGD_DIR to a checkout (see bench/data/README.md).
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
interface SgdTurn {
  speaker: string;
  utterance: string;
  frames: Array<{ service: string; state?: { active_intent?: string } }>;
}

const snake = (s: string): string =>
  s
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");

export function sgdDir(): string | undefined {
  return process.env.CAPGATE_SGD_DIR;
}

export function loadSgd(split: "test" | "dev"): RetrievalSet | { missing: string } {
  const root = sgdDir();
  if (!root) return { missing: "CAPGATE_SGD_DIR is not set (see bench/data/README.md)" };
  const dir = join(root, split);
  const schemaPath = join(dir, "schema.json");
  if (!existsSync(schemaPath)) return { missing: `${schemaPath} not found` };
  const services = JSON.parse(readFileSync(schemaPath, "utf8")) as SgdService[];
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
  const files = readdirSync(dir)
    .filter((f) => /^dialogues_\d+\.json$/.test(f))
    .sort();
  for (const file of files) {
    const dialogues = JSON.parse(readFileSync(join(dir, file), "utf8")) as Array<{ turns: SgdTurn[] }>;
    for (const dialogue of dialogues) {
      const active = new Map<string, string>();
      for (const turn of dialogue.turns) {
        if (turn.speaker !== "USER") continue;
        for (const frame of turn.frames) {
          const intent = frame.state?.active_intent;
          if (!intent || intent === "NONE" || active.get(frame.service) === intent) continue;
          active.set(frame.service, intent);
          const group = domainIntent.get(`${frame.service.split("_")[0]}|${intent}`);
          if (!group || !toolOf.has(`${frame.service}|${intent}`)) continue;
          const key = `${turn.utterance}\u0000${[...group.tools].join(",")}`;
          if (seen.has(key)) continue;
          seen.add(key);
          queries.push({ query: turn.utterance, capabilities: group.capabilities, tools: group.tools });
        }
      }
    }
  }
  return { name: `sgd-${split}`, manifests, queries, note: `${files.length} dialogue files` };
}
