import {
  type CapabilityManifest,
  compiledValidator,
  type JsonSchema,
  signatureFromSchema,
  stableHash,
  topLevelTools,
} from "@capgate/schema";

/**
 * How the model reaches tools. `gate` (the default): the eight top-level tools and
 * search → load → call. `exposed`: every registered tool (native capabilities and the
 * indexed MCP servers' tools) is offered directly as a top-level tool, with no search —
 * the baseline a user compares the gate against.
 */
export type ToolSurfaceKind = "gate" | "exposed";

/** One tool as the model is offered it (a native tool definition). */
export interface SurfaceTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/**
 * The exposed surface. `schemas` is the one map everything else derives from: the
 * parser's allowed names are its keys, and `tools` (the native definitions) and `listing`
 * (the system prompt's lines) render its entries, so what the model is shown and what the
 * parser accepts cannot disagree.
 */
export interface ExposedSurface {
  schemas: Record<string, JsonSchema>;
  tools: SurfaceTool[];
  /** Action name → the concrete tool it calls (`fs_read` → `fs.read`, `memory__read_graph` → `memory/read_graph`). */
  targets: ReadonlyMap<string, string>;
  /** One line per tool: its signature under the name the model uses, and its description. */
  listing: string;
}

/**
 * The top-level tools kept in exposed mode: everything but search/load/call, so goal
 * state, memory, and the verification rule of finish work exactly as in gate mode.
 */
export const EXPOSED_CONTROL_TOOLS: readonly string[] = [
  "goal_update",
  "memory_search",
  "verify",
  "finish",
  "mark_impossible",
];

/** Provider function names: 1–64 letters, digits, `_` or `-`. */
const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NAME = 64;

/**
 * The name a concrete tool is offered under: providers accept only `[A-Za-z0-9_-]{1,64}`,
 * so `fs.read` becomes `fs_read` and `memory/read_graph` `memory__read_graph`; a name
 * still too long keeps its head and a hash of the whole, and a clash gets `_2`, `_3`….
 */
export function exposedToolName(tool: string, taken: ReadonlySet<string>): string {
  let base = tool.replace(/\//g, "__").replace(/[^A-Za-z0-9_-]/g, "_");
  if (base.length > MAX_NAME) base = `${base.slice(0, MAX_NAME - 9)}_${stableHash(tool).slice(0, 8)}`;
  let name = base;
  for (let i = 2; taken.has(name) || !PROVIDER_NAME.test(name); i++) {
    const suffix = `_${i}`;
    name = `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`;
  }
  return name;
}

/**
 * The exposed surface for these manifests (the caller passes the ones the run may see):
 * the control tools first, in protocol order, then every concrete tool sorted by name.
 */
export function exposedSurface(manifests: readonly CapabilityManifest[]): ExposedSurface {
  const control = topLevelTools().filter((t) => EXPOSED_CONTROL_TOOLS.includes(t.name));
  const schemas: Record<string, JsonSchema> = {};
  const tools: SurfaceTool[] = [];
  const targets = new Map<string, string>();
  for (const t of control) {
    schemas[t.name] = t.inputSchema;
    tools.push({ name: t.name, description: t.description, inputSchema: t.inputSchema });
  }
  const concrete = manifests
    .flatMap((m) => m.tools)
    .slice()
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const taken = new Set<string>(Object.keys(schemas));
  for (const tool of concrete) {
    const name = exposedToolName(tool.name, taken);
    taken.add(name);
    const inputSchema = compilable(tool.inputSchema);
    schemas[name] = inputSchema;
    targets.set(name, tool.name);
    tools.push({ name, description: tool.description, inputSchema });
  }
  const listing = tools
    .map((t) => `- ${signatureFromSchema(t.name, t.inputSchema)} — ${oneLine(t.description)}`)
    .join("\n");
  return { schemas, tools, targets, listing };
}

/**
 * A schema the parser can judge with. One that does not compile (a server's broken
 * schema) would make every call to its tool fail to parse; the call goes through with
 * an open object instead, to be judged where gate mode judges it (the executor, the MCP client).
 */
function compilable(schema: JsonSchema): JsonSchema {
  try {
    compiledValidator(schema);
    return schema;
  } catch {
    return { type: "object" };
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
