import { topLevelToolSchemas, topLevelTools } from "@capgate/schema";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { createGateServer, GATE_TOOL_NAMES, RESOURCE_NOT_FOUND, rpcError } from "./gate-server.js";
import { connectAdHoc } from "./stdio/ad-hoc.js";
import { FIXTURES } from "./test-support/fixtures.js";

async function connected(
  handlers: Parameters<typeof createGateServer>[0]["handlers"],
  more: Partial<Parameters<typeof createGateServer>[0]> = {},
) {
  const server = await createGateServer({ name: "capgate", version: "1.2.3", handlers, ...more });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "t", version: "0" });
  await Promise.all([server.connect(a), client.connect(b)]);
  return { client, close: () => client.close() };
}

const seen: Array<[string, unknown]> = [];
const handlers = {
  capability_search: async (args: Record<string, unknown>) => {
    seen.push(["capability_search", args]);
    return [{ capability: "fs" }];
  },
  capability_load: async () => ({ success: true, summary: "loaded fs" }),
  capability_call: async (args: Record<string, unknown>) => {
    if (args.tool === "boom") throw new Error("exploded");
    return { success: false, summary: `failed ${String(args.tool)}` };
  },
  memory_search: async () => "nothing remembered",
};

describe("createGateServer", () => {
  it("exposes exactly the four gate tools with the protocol's schemas and descriptions", async () => {
    const { client, close } = await connected(handlers);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...GATE_TOOL_NAMES]);
    const schemas = topLevelToolSchemas();
    const descriptions = Object.fromEntries(topLevelTools().map((t) => [t.name, t.description]));
    for (const t of tools) {
      expect(t.inputSchema).toEqual(schemas[t.name as keyof typeof schemas]);
      expect(t.description).toBe(descriptions[t.name]);
    }
    expect(client.getServerVersion()).toMatchObject({ name: "capgate", version: "1.2.3" });
    expect(client.getInstructions()).toContain("capability_search");
    await close();
  });

  it("runs the injected handlers and renders their results as text", async () => {
    const { client, close } = await connected(handlers);
    const search = await client.callTool({ name: "capability_search", arguments: { query: "read files" } });
    expect(search.isError).toBeUndefined();
    expect(JSON.parse((search.content as Array<{ text: string }>)[0]?.text ?? "")).toEqual([
      { capability: "fs" },
    ]);
    expect(seen).toContainEqual(["capability_search", { query: "read files" }]);
    const load = await client.callTool({ name: "capability_load", arguments: { name: "fs" } });
    expect(load.content).toEqual([{ type: "text", text: "loaded fs" }]);
    const failed = await client.callTool({ name: "capability_call", arguments: { tool: "x.y" } });
    expect(failed).toMatchObject({ isError: true, content: [{ type: "text", text: "failed x.y" }] });
    const memory = await client.callTool({ name: "memory_search", arguments: { query: "q" } });
    expect(memory.content).toEqual([{ type: "text", text: "nothing remembered" }]);
    await close();
  });

  it("turns rejections and invalid arguments into isError results, an unknown tool into JSON-RPC -32602", async () => {
    const { client, close } = await connected(handlers);
    const boom = await client.callTool({ name: "capability_call", arguments: { tool: "boom" } });
    expect(boom).toMatchObject({ isError: true, content: [{ text: "exploded" }] });
    const invalid = await client.callTool({ name: "capability_search", arguments: { q: "typo" } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as Array<{ text: string }>)[0]?.text).toMatch(/query/);
    const unknown = await client.callTool({ name: "finish", arguments: { summary: "x" } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((unknown as McpError).message).toContain("capability_search, capability_load");
    // The client prefixes "MCP error -32602: " itself; the server's message must not carry it too.
    expect((unknown as McpError).message).not.toMatch(/MCP error -32602: MCP error/);
    expect((unknown as McpError).message).toMatch(/^MCP error -32602: Unknown tool 'finish'/);
    await close();
  });

  it("passes rich results on unchanged: content blocks with annotations, structuredContent, warnings", async () => {
    const content = [
      { type: "text", text: "two things", annotations: { audience: ["user"], priority: 0.5 } },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", annotations: { priority: 1 } },
      {
        type: "resource_link",
        uri: "file:///a.txt",
        name: "a.txt",
        mimeType: "text/plain",
        description: "A",
      },
      { type: "resource", resource: { uri: "mem://x", mimeType: "application/octet-stream", blob: "AAEC" } },
      { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
    ];
    const { client, close } = await connected({
      ...handlers,
      capability_call: async (args) =>
        args.tool === "warned"
          ? { success: true, summary: "s", content: content.slice(0, 1), warnings: ["warning: mismatch"] }
          : {
              success: true,
              summary: "ignored when content is given",
              content,
              structuredContent: { n: 1, list: [1, 2] },
            },
    });
    const r = await client.callTool({ name: "capability_call", arguments: { tool: "rich" } });
    expect(r.content).toEqual(content);
    expect(r.structuredContent).toEqual({ n: 1, list: [1, 2] });
    expect(r.isError).toBeUndefined();
    const w = await client.callTool({ name: "capability_call", arguments: { tool: "warned" } });
    expect(w.content).toEqual([content[0], { type: "text", text: "warning: mismatch" }]);
    await close();
  });

  it("sends a call's progress to a client that asked for it (progressToken), and aborts the handler on cancel", async () => {
    let aborted: string | undefined;
    const { client, close } = await connected({
      ...handlers,
      capability_call: async (_args, extra) => {
        extra.onProgress?.({ progress: 1, total: 2, message: "half" });
        extra.onProgress?.({ progress: 2, total: 2 });
        if (_args.tool === "wait")
          await new Promise<void>((resolve) =>
            extra.signal.addEventListener("abort", () => {
              aborted = String(extra.signal.reason);
              resolve();
            }),
          );
        return { success: true, summary: "done" };
      },
    });
    const reports: unknown[] = [];
    const r = await client.callTool({ name: "capability_call", arguments: { tool: "x.y" } }, undefined, {
      onprogress: (p) => reports.push(p),
    });
    expect(r.content).toEqual([{ type: "text", text: "done" }]);
    expect(reports).toEqual([
      { progress: 1, total: 2, message: "half" },
      { progress: 2, total: 2 },
    ]);
    // Without a progressToken the handler gets no onProgress (nothing is sent).
    const quiet = await client.callTool({ name: "capability_call", arguments: { tool: "x.y" } });
    expect(quiet.content).toEqual([{ type: "text", text: "done" }]);
    // A cancelled request (notifications/cancelled from the client) aborts the handler's signal.
    const controller = new AbortController();
    const pending = client
      .callTool({ name: "capability_call", arguments: { tool: "wait" } }, undefined, {
        signal: controller.signal,
        onprogress: () => controller.abort("stop"),
      })
      .catch((e: unknown) => e);
    await pending;
    await new Promise<void>((resolve) => {
      const check = () => (aborted !== undefined ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(aborted).toBeDefined();
    await close();
  });

  it("serves resources and prompts when given, declaring them; without them answers -32601", async () => {
    const { client, close } = await connected(handlers, {
      resources: {
        list: () => [{ uri: "demo://a", name: "a" }],
        read: async (uri) => {
          if (uri !== "demo://a") throw rpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`);
          return { contents: [{ uri, text: "A" }] };
        },
      },
      prompts: {
        list: async () => [{ name: "srv/greet", arguments: [{ name: "who", required: true }] }],
        get: async (name, args) => ({
          messages: [{ role: "user", content: { type: "text", text: `${name}: hello ${args.who}` } }],
        }),
      },
    });
    expect(client.getServerCapabilities()).toMatchObject({ resources: {}, prompts: {} });
    expect((await client.listResources()).resources).toEqual([{ uri: "demo://a", name: "a" }]);
    expect((await client.readResource({ uri: "demo://a" })).contents).toEqual([
      { uri: "demo://a", text: "A" },
    ]);
    const missing = await client.readResource({ uri: "demo://b" }).catch((e: unknown) => e);
    expect((missing as McpError).code).toBe(RESOURCE_NOT_FOUND);
    expect((missing as McpError).message).toBe("MCP error -32002: Resource not found: demo://b");
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["srv/greet"]);
    const got = await client.getPrompt({ name: "srv/greet", arguments: { who: "you" } });
    expect(got.messages[0]?.content).toEqual({ type: "text", text: "srv/greet: hello you" });
    await close();

    const bare = await connected(handlers);
    expect(bare.client.getServerCapabilities()?.resources).toBeUndefined();
    const none = await bare.client.listResources().catch((e: unknown) => e);
    expect((none as McpError).code).toBe(ErrorCode.MethodNotFound);
    await bare.close();
  });

  it("requires every handler", async () => {
    await expect(
      createGateServer({
        name: "x",
        version: "0",
        handlers: { ...handlers, memory_search: undefined } as unknown as typeof handlers,
      }),
    ).rejects.toThrow("handlers.memory_search must be a function");
  });
});

describe("serveGateOverStdio (a real process, as `capgate mcp serve` runs it)", () => {
  it("serves the gate over stdio to an MCP client and exits when stdin ends", async () => {
    const stderr: string[] = [];
    const session = await connectAdHoc({
      command: process.execPath,
      args: [`${FIXTURES}/gate-serve.mjs`],
      name: "gate",
      onEvent: (e) => {
        if (e.type === "stderr") stderr.push(e.text);
      },
    });
    try {
      expect((await session.listTools()).map((t) => t.qualifiedName)).toEqual(
        GATE_TOOL_NAMES.map((n) => `gate/${n}`),
      );
      const r = await session.callTool("capability_load", { name: "fs" });
      expect(r).toMatchObject({ success: true, summary: "loaded fs: fs.read(path: string)" });
      const bad = await session.callTool("capability_call", { tool: "boom" });
      expect(bad).toMatchObject({ success: false, summary: "the tool exploded" });
    } finally {
      await session.close();
    }
    expect(stderr.join("")).toContain("gate closed");
  }, 30_000);
});
