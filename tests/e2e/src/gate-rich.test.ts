import { type RunningServer, startServer } from "@capgate/server";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, direct, everything, httpGate, sandbox, stdioGate } from "./support.js";

// What the upstream sends, straight from an SDK client on server-everything, is what a
// client of the gate must receive from capability_call: content blocks (annotations and
// all) and structuredContent, byte for byte.
const CALLS: Array<[string, Record<string, unknown>]> = [
  ["get-tiny-image", {}],
  ["get-structured-content", { location: "Chicago" }],
  ["get-resource-links", { count: 3 }],
  ["get-annotated-message", { messageType: "success", includeImage: true }],
];

let upstream: Client;
const expected = new Map<string, unknown>();
beforeAll(async () => {
  const e = everything();
  upstream = await direct(e.command, e.args);
  for (const [tool, args] of CALLS) {
    const r = await upstream.callTool({ name: tool, arguments: args });
    expected.set(tool, { content: r.content, structuredContent: r.structuredContent });
  }
}, 60_000);
afterAll(async () => {
  await upstream?.close();
});

async function checkGate(client: Client) {
  for (const [tool, args] of CALLS) {
    const r = await client.callTool({
      name: "capability_call",
      arguments: { tool: `everything/${tool}`, arguments: args },
    });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect({ content: r.content, structuredContent: r.structuredContent }, tool).toEqual(expected.get(tool));
    // Byte-identical, not merely deep-equal: the same JSON text.
    expect(JSON.stringify(r.content)).toBe(
      JSON.stringify((expected.get(tool) as { content: unknown }).content),
    );
  }
  const kinds = new Set(
    [...expected.values()].flatMap((v) =>
      ((v as { content: Array<{ type: string }> }).content ?? []).map((c) => c.type),
    ),
  );
  expect([...kinds].sort()).toEqual(["image", "resource_link", "text"]);
  // An embedded blob resource (its text carries the time it was made, so compare the shape and the decoded blob).
  const ref = await client.callTool({
    name: "capability_call",
    arguments: {
      tool: "everything/get-resource-reference",
      arguments: { resourceType: "Blob", resourceId: 2 },
    },
  });
  const block = (ref.content as Array<Record<string, unknown>>).find((c) => c.type === "resource") as {
    resource: { uri: string; mimeType: string; blob: string };
  };
  expect(block.resource).toMatchObject({ uri: "demo://resource/dynamic/blob/2", mimeType: "text/plain" });
  expect(Buffer.from(block.resource.blob, "base64").toString()).toMatch(/^Resource 2: This is a base64 blob/);

  // Wrong argument types: rejected by the gate before anything is sent, naming the property.
  const bad = await client.callTool({
    name: "capability_call",
    arguments: { tool: "everything/get-sum", arguments: { a: "1", b: 2 } },
  });
  expect(bad.isError).toBe(true);
  const text = (bad.content as Array<{ text: string }>)[0]?.text ?? "";
  expect(text).toContain("invalid_arguments (at `a`)");
  expect(text).toContain("Nothing was sent to the server");
  // An unknown top-level tool is a JSON-RPC error, as the spec wants.
  await expect(client.callTool({ name: "finish", arguments: { summary: "x" } })).rejects.toMatchObject({
    code: -32602,
  });
}

describe("rich MCP results through the gate, unflattened", () => {
  it("over stdio (capgate mcp serve)", async () => {
    const box = sandbox({ mcpServers: { everything: everything() } });
    const client = await stdioGate(
      ["mcp", "serve", "--workspace", box.workspace, "--config", box.configFile],
      {
        cwd: box.root,
        env: childEnv(box.home),
      },
    );
    try {
      await checkGate(client);
    } finally {
      await client.close();
    }
  }, 90_000);

  it("over Streamable HTTP (/mcp)", async () => {
    const box = sandbox({ mcpServers: { everything: everything() } });
    let server: RunningServer | undefined;
    try {
      server = await startServer({
        port: 0,
        token: "e2e-token-e2e-token-e2e-token",
        workspace: box.workspace,
        configPath: box.configFile,
        stateDir: box.home,
      });
      const client = await httpGate(server.url, server.token);
      try {
        await checkGate(client);
      } finally {
        await client.close();
      }
    } finally {
      await server?.close();
    }
  }, 90_000);
});
