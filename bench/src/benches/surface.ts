import {
  type CapabilityManifest,
  type JsonSchema,
  signatureFromSchema,
  topLevelTools,
} from "@capgate/schema";
import type { Figure } from "../figure.js";
import { syntheticManifests } from "../lib/synthetic.js";

export const name = "surface";

/** The ten built-in capability packages; each exports its `manifest`. */
const CAPABILITY_PACKAGES = [
  "@capgate/capability-fs",
  "@capgate/capability-shell",
  "@capgate/capability-git",
  "@capgate/capability-web",
  "@capgate/capability-browser-panel",
  "@capgate/capability-cua",
  "@capgate/capability-mcp",
  "@capgate/capability-workers",
  "@capgate/capability-memory",
  "@capgate/capability-code",
] as const;

const BUILT_IN_TOOLS = 47;

/** A tool exposed the usual way: one function schema per tool, as JSON. */
function functionSchemaChars(tool: { name: string; description: string; inputSchema: JsonSchema }): number {
  return JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.inputSchema })
    .length;
}

/**
 * What the model sees of the gate, whatever the registry holds: each of the eight top-level
 * tools' signature line plus its function schema as sent.
 */
export function gateSurfaceChars(): number {
  let chars = 0;
  for (const tool of topLevelTools()) {
    chars += signatureFromSchema(tool.name, tool.inputSchema).length + 1;
    chars += functionSchemaChars(tool);
  }
  return chars;
}

async function builtInManifests(): Promise<CapabilityManifest[] | string> {
  const out: CapabilityManifest[] = [];
  for (const pkg of CAPABILITY_PACKAGES) {
    let mod: { manifest?: CapabilityManifest };
    try {
      mod = (await import(pkg)) as { manifest?: CapabilityManifest };
    } catch (error) {
      return `${pkg} cannot be imported (${(error as Error).message.split("\n")[0]}); build it first`;
    }
    if (!mod.manifest || !Array.isArray(mod.manifest.tools)) return `${pkg} does not export a manifest yet`;
    out.push(mod.manifest);
  }
  return out;
}

export async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const numerator = gateSurfaceChars();
  const manifests = await builtInManifests();
  if (typeof manifests === "string") {
    console.log(`surface.ratio: cannot measure: ${manifests}`);
  } else {
    const tools = manifests.flatMap((m) => m.tools);
    if (tools.length !== BUILT_IN_TOOLS) {
      console.log(
        `surface.ratio: note: the ten capabilities declare ${tools.length} tools, not ${BUILT_IN_TOOLS}`,
      );
    }
    const all = tools.reduce((n, t) => n + functionSchemaChars(t), 0);
    console.log(
      `surface: gate ${numerator} chars; ${tools.length} built-in tools as function schemas ${all} chars`,
    );
    figures.push({ key: "surface.ratio", value: Number((numerator / all).toFixed(4)), target: "≤ 0.15" });
  }
  const synthetic = syntheticManifests(1000, 10).flatMap((m) => m.tools);
  const big = synthetic.reduce((n, t) => n + functionSchemaChars(t), 0);
  console.log(`surface: ${synthetic.length} synthetic tools as function schemas ${big} chars`);
  figures.push({ key: "surface.ratio_10k", value: Number((numerator / big).toFixed(5)), target: "≤ 0.002" });
  return figures;
}
