import {
  type GatePrompts,
  type GateResources,
  type McpContentBlock,
  type McpServerFeatures,
  RESOURCE_NOT_FOUND,
  rpcError,
} from "@capgate/mcp-client";

/** Links a gate session remembers (the most recent ones; older ones are forgotten first). */
const MAX_LINKS = 1_000;
/** Prompts listed by the gate at most, over all servers. */
const MAX_PROMPTS = 500;

/**
 * The `resource_link`s upstream results brought through one gate session, each with the
 * server that returned it: the only URIs the gate's `resources/read` serves, so a client
 * reads what a tool pointed it to and nothing else.
 */
export class LinkMemory {
  readonly #links = new Map<
    string,
    { server: string; name: string; mimeType?: string; description?: string }
  >();

  remember(server: string, content: readonly McpContentBlock[]): void {
    for (const block of content) {
      if (block.type !== "resource_link") continue;
      const link = block as { uri: string; name: string; mimeType?: unknown; description?: unknown };
      this.#links.delete(link.uri);
      this.#links.set(link.uri, {
        server,
        name: link.name,
        ...(typeof link.mimeType === "string" ? { mimeType: link.mimeType } : {}),
        ...(typeof link.description === "string" ? { description: link.description } : {}),
      });
      if (this.#links.size > MAX_LINKS) this.#links.delete(this.#links.keys().next().value as string);
    }
  }

  get(uri: string) {
    return this.#links.get(uri);
  }

  list() {
    return [...this.#links].map(([uri, link]) => ({ uri, ...link }));
  }
}

/** The gate server's resources: the links its tools returned, read from the server that returned each. */
export function gateResources(features: McpServerFeatures, links: LinkMemory): GateResources {
  return {
    list: () => links.list().map(({ server: _server, ...resource }) => resource),
    async read(uri, extra) {
      const link = links.get(uri);
      if (!link)
        throw rpcError(
          RESOURCE_NOT_FOUND,
          `Resource not found: capgate serves the resources its tools returned links to in this session, and ${JSON.stringify(uri.slice(0, 200))} is not one. Other resources of a configured server are read with capability_call {"tool":"mcp.read_resource","arguments":{"server":"<server>","uri":"<uri>"}} (capability mcp).`,
        );
      const result = await features.readResource(link.server, uri, { signal: extra.signal });
      return {
        contents: (result.content ?? []).map((block) =>
          block.type === "resource"
            ? (block.resource as { uri: string; text: string } | { uri: string; blob: string })
            : { uri, mimeType: "text/plain", text: block.type === "text" ? block.text : result.summary },
        ),
      };
    },
  };
}

/**
 * The configured servers' prompts as `<server>/<prompt>` (servers without prompts, or
 * unreachable, are left out). `servers` is asked each time: a config reload changes them.
 */
export function gatePrompts(features: McpServerFeatures, serverNames: () => readonly string[]): GatePrompts {
  return {
    async list(extra) {
      const lists = await Promise.allSettled(
        serverNames().map((server) => features.listPrompts(server, { signal: extra.signal })),
      );
      return lists
        .flatMap((r) => (r.status === "fulfilled" ? r.value : []))
        .slice(0, MAX_PROMPTS)
        .map((p) => ({
          name: `${p.server}/${p.name}`,
          ...(p.title ? { title: p.title } : {}),
          ...(p.description ? { description: p.description } : {}),
          arguments: p.arguments,
        }));
    },
    async get(name, args, extra) {
      const slash = name.indexOf("/");
      const server = slash > 0 ? name.slice(0, slash) : "";
      const servers = serverNames();
      if (!servers.includes(server))
        throw rpcError(
          -32602,
          `Unknown prompt ${JSON.stringify(name.slice(0, 200))}: the gate's prompts are named <server>/<prompt>, with a configured server (${servers.join(", ") || "none"}).`,
        );
      const prompt = await features.getPrompt(server, name.slice(slash + 1), args, { signal: extra.signal });
      return {
        ...(prompt.data.description ? { description: prompt.data.description } : {}),
        // The blocks were bounded by the pool's rendering; their shape is MCP's content block.
        messages: prompt.data.messages as unknown as Awaited<ReturnType<GatePrompts["get"]>>["messages"],
      };
    },
  };
}
