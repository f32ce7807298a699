import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import type { RunningServer } from "@capgate/server";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { direct, everything, httpGate, sandbox, serverEntry, serveSandbox, stdioGateOn } from "./support.js";

/** A free port on 127.0.0.1 (server-everything takes its port from PORT and cannot report a port-0 pick). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** server-everything over Streamable HTTP (`streamableHttp`, at /mcp) or legacy SSE (`sse`, at /sse). */
async function everythingOverHttp(
  mode: "streamableHttp" | "sse",
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [serverEntry("server-everything"), mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      if (/listening on port|running on port/i.test(err)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything ${mode} exited with ${code}: ${err}`)));
  });
  return { url: `http://127.0.0.1:${port}${mode === "sse" ? "/sse" : "/mcp"}`, child };
}

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
    const client = await stdioGateOn(box);
    try {
      await checkGate(client);
    } finally {
      await client.close();
    }
  }, 90_000);

  for (const mode of ["streamableHttp", "sse"] as const) {
    it(`over stdio, with server-everything upstream over ${mode === "sse" ? "legacy SSE" : "Streamable HTTP"}`, async () => {
      const upstreamHttp = await everythingOverHttp(mode);
      try {
        const box = sandbox({
          mcpServers: { everything: { type: mode === "sse" ? "sse" : "http", url: upstreamHttp.url } },
        });
        const client = await stdioGateOn(box);
        try {
          await checkGate(client);
        } finally {
          await client.close();
        }
      } finally {
        upstreamHttp.child.kill("SIGTERM");
      }
    }, 90_000);
  }

  it("over Streamable HTTP (/mcp)", async () => {
    const box = sandbox({ mcpServers: { everything: everything() } });
    let server: RunningServer | undefined;
    try {
      server = await serveSandbox(box, "e2e-token-e2e-token-e2e-token");
      const client = await httpGate(server.url, server.token);
      try {
        await checkGate(client);
      } finally {
        await client.close();
      }
      // POST /tools/call returns the same blocks and structuredContent in its JSON.
      for (const tool of ["get-tiny-image", "get-structured-content"]) {
        const args = CALLS.find(([t]) => t === tool)?.[1] ?? {};
        const response = await fetch(`${server.url}/tools/call`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
          body: JSON.stringify({ tool: `everything/${tool}`, arguments: args }),
        });
        const body = (await response.json()) as {
          success: boolean;
          content: unknown;
          structuredContent?: unknown;
        };
        expect(response.status).toBe(200);
        expect({ content: body.content, structuredContent: body.structuredContent }).toEqual(
          expected.get(tool),
        );
      }
      // Wrong types over HTTP: 400-class rejection naming arguments.a.
      const bad = await fetch(`${server.url}/tools/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify({ tool: "everything/get-sum", arguments: { a: "1", b: 2 } }),
      });
      const badBody = (await bad.json()) as { error: { code: string; property: string } };
      expect(badBody.error).toMatchObject({ code: "invalid_arguments", property: "arguments.a" });
    } finally {
      await server?.close();
    }
  }, 90_000);
});
