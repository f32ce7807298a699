import type { RunningServer } from "@capgate/server";
import {
  Client,
  type ClientOptions,
  ProtocolError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, childEnv, everything, sandbox, serveSandbox, resultText as text } from "./support.js";

// The gate as a client of the next SDK generation (@modelcontextprotocol/client 2.x) sees it:
// the same checks the 1.x-client tests make (gate-rich, gate-passthrough, desktop-snippet),
// over stdio (`capgate mcp serve`) and over Streamable HTTP (`/mcp` of `capgate serve`).

const TOKEN = "e2e-token-e2e-token-e2e-token";
const GATE_TOOLS = ["capability_search", "capability_load", "capability_call", "memory_search"];

async function stdioGateV2(options: ClientOptions = {}) {
  const box = sandbox({ mcpServers: { everything: everything() } });
  const client = new Client({ name: "e2e-v2", version: "0" }, options);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_BIN, "mcp", "serve", "--workspace", box.workspace, "--config", box.configFile],
    cwd: box.root,
    env: childEnv(box.home),
    stderr: "pipe",
  });
  await client.connect(transport);
  return { client, transport };
}

async function httpGateV2(url: string, options: ClientOptions = {}) {
  const client = new Client({ name: "e2e-v2", version: "0" }, options);
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

// What server-everything sends a 2.x client directly is what that client must get through
// capability_call: content blocks and structuredContent, byte for byte.
const CALLS: Array<[string, Record<string, unknown>]> = [
  ["echo", { message: "hello from the v2 client" }],
  ["get-tiny-image", {}],
  ["get-structured-content", { location: "Chicago" }],
  ["get-resource-links", { count: 3 }],
  ["get-annotated-message", { messageType: "success", includeImage: true }],
];
const expected = new Map<string, { content: unknown; structuredContent: unknown }>();
beforeAll(async () => {
  const e = everything();
  const upstream = new Client({ name: "e2e-v2-direct", version: "0" });
  await upstream.connect(new StdioClientTransport({ command: e.command, args: e.args, stderr: "pipe" }));
  try {
    for (const [tool, args] of CALLS) {
      const r = await upstream.callTool({ name: tool, arguments: args });
      expected.set(tool, { content: r.content, structuredContent: r.structuredContent });
    }
  } finally {
    await upstream.close();
  }
  // The echo is the message, and every kind of block the gate must pass on is in the set.
  expect(JSON.stringify(expected.get("echo")?.content)).toContain("hello from the v2 client");
  const kinds = new Set(
    [...expected.values()].flatMap((v) => (v.content as Array<{ type: string }>).map((c) => c.type)),
  );
  expect([...kinds].sort()).toEqual(["image", "resource_link", "text"]);
}, 60_000);

/** The checks both transports must pass, as a 2.x client sees them. */
async function checkGate(client: Client) {
  // initialize: the 2025 handshake (2.x's default), with the gate's identity and capabilities.
  expect(client.getProtocolEra()).toBe("legacy");
  expect(client.getNegotiatedProtocolVersion()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(client.getServerVersion()?.name).toBe("capgate");
  expect(client.getServerCapabilities()?.tools).toBeDefined();
  expect(client.getServerCapabilities()?.resources).toBeDefined();
  expect(client.getInstructions()).toContain("capability_search");

  // Exactly the four gate tools, in order.
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(GATE_TOOLS);

  // Search finds an upstream tool by its <server>/<tool> name.
  const search = await client.callTool({ name: "capability_search", arguments: { query: "echo" } });
  expect(search.isError, text(search)).toBeFalsy();
  expect(text(search)).toContain("everything/echo");

  // Load shows the server's instructions; then the calls pass the results on unchanged.
  const load = await client.callTool({ name: "capability_load", arguments: { name: "mcp:everything" } });
  expect(load.isError, text(load)).toBeFalsy();
  expect(text(load)).toContain("Instructions of the MCP server 'everything'");
  for (const [tool, args] of CALLS) {
    const r = await client.callTool({
      name: "capability_call",
      arguments: { tool: `everything/${tool}`, arguments: args },
    });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect({ content: r.content, structuredContent: r.structuredContent }, tool).toEqual(expected.get(tool));
    expect(JSON.stringify(r.content), tool).toBe(JSON.stringify(expected.get(tool)?.content));
  }

  // An embedded blob resource (its text carries the time it was made: compare shape and blob).
  const ref = await client.callTool({
    name: "capability_call",
    arguments: {
      tool: "everything/get-resource-reference",
      arguments: { resourceType: "Blob", resourceId: 2 },
    },
  });
  const block = (ref.content as Array<Record<string, unknown>>).find((c) => c.type === "resource") as
    | { resource: { uri: string; mimeType: string; blob: string } }
    | undefined;
  expect(block?.resource).toMatchObject({ uri: "demo://resource/dynamic/blob/2", mimeType: "text/plain" });
  expect(Buffer.from(block?.resource.blob ?? "", "base64").toString()).toMatch(
    /^Resource 2: This is a base64 blob/,
  );

  // Wrong argument types: refused by the gate before anything is sent, naming the property.
  const bad = await client.callTool({
    name: "capability_call",
    arguments: { tool: "everything/get-sum", arguments: { a: "1", b: 2 } },
  });
  expect(bad.isError).toBe(true);
  expect(text(bad)).toContain("invalid_arguments (at `a`)");
  expect(text(bad)).toContain("Nothing was sent to the server");

  // An unknown top-level tool is JSON-RPC -32602. 2.x does not prefix the message as 1.x
  // does, so the message is what the gate put on the wire: it must carry no prefix itself.
  const unknown = await client.callTool({ name: "finish", arguments: { summary: "x" } }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(unknown).toBeInstanceOf(ProtocolError);
  expect((unknown as ProtocolError).code).toBe(-32602);
  expect((unknown as ProtocolError).message).not.toContain("MCP error -32602: MCP error");
  expect((unknown as ProtocolError).message).not.toMatch(/MCP error/);
  expect((unknown as ProtocolError).message).toMatch(/^Unknown tool 'finish'/);
  expect((unknown as ProtocolError).message).toContain("capability_search, capability_load");

  // resources/read serves the links a tool returned in this session, and nothing else.
  const linked = await client.callTool({
    name: "capability_call",
    arguments: { tool: "everything/get-resource-links", arguments: { count: 2 } },
  });
  const links = (linked.content as Array<{ type: string; uri?: string }>).filter(
    (c) => c.type === "resource_link",
  );
  expect(links.length).toBe(2);
  const listed = (await client.listResources()).resources.map((x) => x.uri);
  expect(listed).toEqual(expect.arrayContaining(links.map((l) => l.uri)));
  const read = await client.readResource({ uri: links[0]?.uri as string });
  expect(read.contents[0]?.uri).toBe(links[0]?.uri);
  expect(JSON.stringify(read.contents[0])).toMatch(/Resource 1|"blob"/);
  const other = await client.readResource({ uri: "demo://resource/dynamic/text/99" }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(other).toBeInstanceOf(ProtocolError);
  expect((other as ProtocolError).code).toBe(-32002);
  expect((other as ProtocolError).message).toMatch(/^Resource not found: /);
  expect((other as ProtocolError).message).toContain("mcp.read_resource");

  // Prompts as <server>/<prompt>.
  expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain("everything/args-prompt");
  const prompt = await client.getPrompt({ name: "everything/args-prompt", arguments: { city: "Lyon" } });
  expect(JSON.stringify(prompt.messages)).toContain("Lyon");

  // Progress of a long call reaches the client's onprogress.
  const reports: Array<{ progress: number; total?: number }> = [];
  const long = await client.callTool(
    {
      name: "capability_call",
      arguments: { tool: "everything/trigger-long-running-operation", arguments: { duration: 2, steps: 4 } },
    },
    { onprogress: (p) => reports.push(p), resetTimeoutOnProgress: true },
  );
  expect(long.isError, text(long)).toBeFalsy();
  expect(text(long)).toContain("Long running operation completed");
  // The last report may lose the race with the result it precedes.
  expect(reports.length).toBeGreaterThanOrEqual(3);
  expect(reports[0]).toMatchObject({ progress: 1, total: 4 });
}

/** What a client that opted into 2.x's version negotiation must still be able to do. */
async function checkNegotiated(client: Client) {
  // The gate speaks the 2025 revisions: the server/discover probe falls back to initialize.
  expect(client.getProtocolEra()).toBe("legacy");
  expect(client.getNegotiatedProtocolVersion()).toMatch(/^2025-/);
  expect(client.getServerVersion()?.name).toBe("capgate");
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(GATE_TOOLS);
  const echo = await client.callTool({
    name: "capability_call",
    arguments: { tool: "everything/echo", arguments: { message: "negotiated" } },
  });
  expect(echo.isError, text(echo)).toBeFalsy();
  expect(echo.content).toEqual([{ type: "text", text: "Echo: negotiated" }]);
}

const AUTO: ClientOptions = { versionNegotiation: { mode: "auto" } };

describe("a @modelcontextprotocol/client 2.x client on the gate", () => {
  it("over stdio (capgate mcp serve)", async () => {
    const { client } = await stdioGateV2();
    try {
      await checkGate(client);
    } finally {
      await client.close();
    }
  }, 120_000);

  it("over stdio with versionNegotiation 'auto' (the probe runs on a sibling capgate mcp serve)", async () => {
    const { client } = await stdioGateV2(AUTO);
    try {
      await checkNegotiated(client);
    } finally {
      await client.close();
    }
  }, 120_000);

  describe("over Streamable HTTP (/mcp)", () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await serveSandbox(sandbox({ mcpServers: { everything: everything() } }), TOKEN);
    }, 60_000);
    afterAll(async () => {
      await server?.close();
    });

    const sessions = async () => {
      const r = await fetch(`${server.url}/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return ((await r.json()) as { mcpSessions: number }).mcpSessions;
    };

    it("passes the same checks", async () => {
      const { client, transport } = await httpGateV2(server.url);
      try {
        expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
        await checkGate(client);
      } finally {
        await client.close();
      }
    }, 120_000);

    it("with versionNegotiation 'auto': the refused probe opens no session, the fallback opens one", async () => {
      const before = await sessions();
      const { client } = await httpGateV2(server.url, AUTO);
      try {
        expect(await sessions()).toBe(before + 1);
        await checkNegotiated(client);
      } finally {
        await client.close();
      }
    }, 60_000);

    it("ends its session on terminateSession (DELETE), and a wrong token cannot connect", async () => {
      const before = await sessions();
      const { client, transport } = await httpGateV2(server.url);
      expect(await sessions()).toBe(before + 1);
      expect((await client.listTools()).tools).toHaveLength(4);
      await transport.terminateSession();
      expect(await sessions()).toBe(before);
      await client.close();

      const intruder = new Client({ name: "e2e-v2", version: "0" });
      const refused = await intruder
        .connect(
          new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
            requestInit: { headers: { authorization: "Bearer not-the-token-not-the-token" } },
          }),
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(Error);
      expect(await sessions()).toBe(before);
      await intruder.close();
    }, 60_000);
  });
});
