import type { CapabilityManifest, JsonSchema, ToolManifest, ToolRisk } from "@capgate/schema";
import type { FromSchema } from "./schema-types.js";
import type { PolicyCheck, ToolContext, ToolResult } from "./types.js";

/** A manifest declared `as const` (readonly all the way down). */
export interface ManifestLike {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly profileFit: readonly string[];
  readonly manifestFormat?: number;
  readonly tools: readonly {
    readonly name: string;
    readonly description: string;
    readonly inputSchema: unknown;
    readonly risk?: ToolRisk;
  }[];
}

type Verb<N> = N extends `${string}.${infer V}` ? V : N;

export type ToolHandler<Args = Record<string, unknown>> = (
  args: Args,
  ctx: ToolContext,
) => Promise<ToolResult>;

/** One handler per tool, keyed by the verb after the dot (`read` for `fs.read`), typed from its schema. */
export type HandlersFor<M extends ManifestLike> = {
  [N in M["tools"][number]["name"] as Verb<N>]: ToolHandler<ArgsOf<M, N>>;
};

/** The argument type of tool `N` of manifest `M`. */
export type ArgsOf<M extends ManifestLike, N extends string> = FromSchema<
  Extract<M["tools"][number], { readonly name: N }>["inputSchema"]
>;

/**
 * Checks that run before approval and before the handler (path confinement, the shell
 * policy, the URL guard): throw a PolicyDeniedError to refuse the call. Keyed like handlers.
 */
export type PoliciesFor<M extends ManifestLike> = {
  [N in M["tools"][number]["name"] as Verb<N>]?: PolicyCheck<ArgsOf<M, N>>;
};

export interface Capability {
  readonly manifest: CapabilityManifest;
  /** Full tool name → handler. */
  readonly handlers: ReadonlyMap<string, ToolHandler>;
  /** Full tool name → pre-dispatch policy check. */
  readonly policies: ReadonlyMap<string, PolicyCheck>;
}

export interface DefineCapabilityOptions<M extends ManifestLike> {
  manifest: M;
  handlers: NoInfer<HandlersFor<M>>;
  policies?: NoInfer<PoliciesFor<M>>;
}

function verbOf(toolName: string): string {
  const dot = toolName.indexOf(".");
  return dot === -1 ? toolName : toolName.slice(dot + 1);
}

/**
 * Bind a manifest to its handlers. The compiler checks there is exactly one handler per
 * tool and that each handler's `args` match the tool's schema; at run time a missing or
 * extra handler throws here, at definition, not at the first call.
 */
export function defineCapability<const M extends ManifestLike>(
  options: DefineCapabilityOptions<M>,
): Capability {
  const { manifest } = options;
  const handlers = options.handlers as unknown as Record<string, ToolHandler | undefined>;
  const policies = (options.policies ?? {}) as unknown as Record<string, PolicyCheck | undefined>;
  const byTool = new Map<string, ToolHandler>();
  const policyByTool = new Map<string, PolicyCheck>();
  const verbs = new Set<string>();
  for (const tool of manifest.tools) {
    const verb = verbOf(tool.name);
    verbs.add(verb);
    const handler = handlers[verb];
    if (typeof handler !== "function") {
      throw new TypeError(
        `capability '${manifest.name}': no handler for tool '${tool.name}' (expected handlers.${verb})`,
      );
    }
    byTool.set(tool.name, handler);
    const policy = policies[verb];
    if (policy) policyByTool.set(tool.name, policy);
  }
  for (const key of Object.keys(handlers)) {
    if (!verbs.has(key))
      throw new TypeError(`capability '${manifest.name}': handler '${key}' has no tool in the manifest`);
  }
  for (const key of Object.keys(policies)) {
    if (!verbs.has(key))
      throw new TypeError(`capability '${manifest.name}': policy '${key}' has no tool in the manifest`);
  }
  return Object.freeze({
    manifest: toMutableManifest(manifest),
    handlers: byTool,
    policies: policyByTool,
  });
}

/** A manifest as the registry and the executor hold it: plain arrays, its own copy of each schema. */
export function toMutableManifest(m: ManifestLike): CapabilityManifest {
  return {
    name: m.name,
    version: m.version,
    description: m.description,
    profileFit: [...m.profileFit],
    ...(m.manifestFormat === undefined ? {} : { manifestFormat: m.manifestFormat }),
    tools: m.tools.map(
      (t): ToolManifest => ({
        name: t.name,
        description: t.description,
        inputSchema: structuredClone(t.inputSchema) as JsonSchema,
        ...(t.risk === undefined ? {} : { risk: t.risk }),
      }),
    ),
  };
}
