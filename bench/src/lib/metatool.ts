import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CapabilityManifest } from "@capgate/schema";
import { parse } from "csv-parse/sync";

/** The MetaTool development set: 199 tools (name → sentence) and 20,614 labelled queries. */
export interface MetaToolData {
  dir: string;
  tools: Map<string, string>;
  queries: Array<{ query: string; tool: string }>;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** `$CAPGATE_METATOOL_DIR`, else `../shared/eval/metatool` beside the repository. */
export function metatoolDir(): string {
  return process.env.CAPGATE_METATOOL_DIR ?? resolve(repoRoot, "..", "shared", "eval", "metatool");
}

/** The data set, or undefined (with the reason) when it is not on this machine. */
export function loadMetaTool(): MetaToolData | { missing: string } {
  const dir = metatoolDir();
  const toolsPath = join(dir, "plugin_des.json");
  const csvPath = join(dir, "all_clean_data.csv");
  if (!existsSync(toolsPath) || !existsSync(csvPath)) {
    return { missing: `MetaTool data not found in ${dir} (set CAPGATE_METATOOL_DIR)` };
  }
  const raw = JSON.parse(readFileSync(toolsPath, "utf8")) as Record<string, unknown>;
  const tools = new Map<string, string>();
  for (const [name, description] of Object.entries(raw)) {
    if (typeof description === "string") tools.set(name, description);
  }
  // Queries contain commas, quotes and line breaks inside quotes: a real CSV parser.
  const rows = parse(readFileSync(csvPath, "utf8"), {
    columns: true,
    skip_empty_lines: true,
    relax_column_count: false,
  }) as Array<{ Query?: string; Tool?: string }>;
  const queries: MetaToolData["queries"] = [];
  for (const row of rows) {
    if (typeof row.Query === "string" && typeof row.Tool === "string" && tools.has(row.Tool)) {
      queries.push({ query: row.Query, tool: row.Tool });
    }
  }
  return { dir, tools, queries };
}

/**
 * A MetaTool plugin name as a capability name (`^[a-z][a-z0-9_]*$`): camelCase split,
 * lowercased, anything else folded to `_` — `ResearchHelper` → `research_helper`,
 * `PDF&URLTool` → `pdf_url_tool`.
 */
export function capabilityNameFor(plugin: string): string {
  const snake = plugin
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return /^[a-z]/.test(snake) ? snake : `t_${snake}`;
}

/**
 * One one-tool capability manifest per plugin: the capability and its tool both carry the
 * plugin's sentence. The verb `invoke` is the same for all 199, so it carries no signal.
 */
export function metatoolManifests(
  data: MetaToolData,
  only?: ReadonlySet<string>,
): {
  manifests: CapabilityManifest[];
  capabilityOf: Map<string, string>;
} {
  const manifests: CapabilityManifest[] = [];
  const capabilityOf = new Map<string, string>();
  const used = new Set<string>();
  for (const [plugin, sentence] of [...data.tools.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    let name = capabilityNameFor(plugin);
    for (let i = 2; used.has(name); i++) name = `${capabilityNameFor(plugin)}_${i}`;
    used.add(name);
    capabilityOf.set(plugin, name);
    if (only && !only.has(plugin)) continue;
    manifests.push({
      name,
      version: "1.0.0",
      description: sentence,
      profileFit: [],
      tools: [
        {
          name: `${name}.invoke`,
          description: sentence,
          inputSchema: {
            type: "object",
            additionalProperties: false,
            properties: { request: { type: "string" } },
            required: ["request"],
          },
        },
      ],
    });
  }
  return { manifests, capabilityOf };
}
