import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunningServer } from "@capgate/server";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLI_BIN,
  childEnv,
  everything,
  httpGate,
  REPO,
  sandbox,
  serveSandbox,
  stdioGateOn,
  resultText as text,
} from "./support.js";

// What real servers do that the gate passes on: progress of long calls, resource links its
// tools return, prompts, a server's instructions, and one upstream session per /mcp client.

const TOKEN = "e2e-token-e2e-token-e2e-token";

/** A raw stdio MCP server that keeps a value per session (remember / recall). */
const STATEFUL = join(REPO, "packages", "mcp-client", "test", "fixtures", "state-server.mjs");

const CONFIG = {
  mcpServers: {
    // A 4 s timeout, and a 6 s job below that reports progress every half second.
    everything: { ...everything(), timeoutMs: 4_000 },
    own: { command: process.execPath, args: [STATEFUL] },
    shared: { command: process.execPath, args: [STATEFUL], share: true },
  },
};

let server: RunningServer;
beforeAll(async () => {
  server = await serveSandbox(sandbox(CONFIG), TOKEN);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

async function longCall(client: Client) {
  const reports: Array<{ progress: number; total?: number }> = [];
  const r = await client.callTool(
    {
      name: "capability_call",
      arguments: { tool: "everything/trigger-long-running-operation", arguments: { duration: 6, steps: 12 } },
    },
    undefined,
    { onprogress: (p) => reports.push(p), resetTimeoutOnProgress: true },
  );
  return { r, reports };
}

describe("/mcp passes on what upstream servers do", () => {
  it("forwards progress to the client, and progress keeps a call alive past the server's timeoutMs", async () => {
    const client = await httpGate(server.url, TOKEN);
    try {
      const { r, reports } = await longCall(client);
      expect(r.isError, text(r)).toBeFalsy();
      expect(text(r)).toContain("Long running operation completed");
      // The last report may lose the race with the result it precedes.
      expect(reports.length).toBeGreaterThanOrEqual(11);
      expect(reports[0]).toMatchObject({ progress: 1, total: 12 });
    } finally {
      await client.close();
    }
  }, 120_000);

  it("serves resources/read for the links its tools returned, and nothing else", async () => {
    const client = await httpGate(server.url, TOKEN);
    try {
      expect(client.getServerCapabilities()?.resources).toBeDefined();
      const r = await client.callTool({
        name: "capability_call",
        arguments: { tool: "everything/get-resource-links", arguments: { count: 2 } },
      });
      const links = (r.content as Array<{ type: string; uri?: string }>).filter(
        (c) => c.type === "resource_link",
      );
      expect(links.length).toBe(2);
      const listed = (await client.listResources()).resources.map((x) => x.uri);
      expect(listed).toEqual(expect.arrayContaining(links.map((l) => l.uri)));
      const read = await client.readResource({ uri: links[0]?.uri as string });
      expect(read.contents[0]?.uri).toBe(links[0]?.uri);
      expect(JSON.stringify(read.contents[0])).toMatch(/Resource 1|"blob"/);
      const other = await client
        .readResource({ uri: "demo://resource/dynamic/text/99" })
        .catch((e: unknown) => e);
      expect((other as McpError).code).toBe(-32002);
      expect((other as McpError).message).toContain("mcp.read_resource");
    } finally {
      await client.close();
    }
  }, 120_000);

  it("lists and gets the servers' prompts as <server>/<prompt>", async () => {
    const client = await httpGate(server.url, TOKEN);
    try {
      const names = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(names).toContain("everything/args-prompt");
      const got = await client.getPrompt({ name: "everything/args-prompt", arguments: { city: "Lyon" } });
      expect(JSON.stringify(got.messages)).toContain("Lyon");
      const unknown = await client.getPrompt({ name: "nowhere/x" }).catch((e: unknown) => e);
      expect((unknown as McpError).message).toContain("<server>/<prompt>");
    } finally {
      await client.close();
    }
  }, 120_000);

  it("shows a server's instructions when its capability is loaded, and reads resources and prompts through mcp.*", async () => {
    const client = await httpGate(server.url, TOKEN);
    try {
      const load = await client.callTool({ name: "capability_load", arguments: { name: "mcp:everything" } });
      expect(text(load)).toContain("Instructions of the MCP server 'everything'");
      expect(text(load)).toContain("Everything Server");
      await client.callTool({ name: "capability_load", arguments: { name: "mcp" } });
      const read = await client.callTool({
        name: "capability_call",
        arguments: {
          tool: "mcp.read_resource",
          arguments: { server: "everything", uri: "demo://resource/dynamic/text/7" },
        },
      });
      expect(read.isError, text(read)).toBeFalsy();
      // The resource comes back as an embedded resource block, bounded like a tool result.
      expect(JSON.stringify(read.content)).toContain("Resource 7: This is a plaintext resource");
      const listed = await client.callTool({
        name: "capability_call",
        arguments: { tool: "mcp.list_prompts", arguments: { server: "everything" } },
      });
      expect(text(listed)).toContain("args-prompt(city, state?)");
      const prompt = await client.callTool({
        name: "capability_call",
        arguments: {
          tool: "mcp.get_prompt",
          arguments: { server: "everything", name: "args-prompt", arguments: { city: "Oslo" } },
        },
      });
      expect(text(prompt)).toContain("Oslo");
    } finally {
      await client.close();
    }
  }, 120_000);

  it("gives each /mcp client its own upstream session of a server, and one shared by all for share: true", async () => {
    const a = await httpGate(server.url, TOKEN);
    const b = await httpGate(server.url, TOKEN);
    const call = async (client: Client, tool: string, args: Record<string, unknown> = {}) => {
      const r = await client.callTool({ name: "capability_call", arguments: { tool, arguments: args } });
      expect(r.isError, text(r)).toBeFalsy();
      return text(r);
    };
    try {
      // One client's state (a page it opened, a secret it stored) is not the other's.
      expect(await call(a, "own/remember", { value: "secret-of-a" })).toContain("value:secret-of-a");
      expect(await call(a, "own/recall")).toContain("value:secret-of-a");
      expect(await call(b, "own/recall")).not.toContain("secret-of-a");
      // A server marked share: true keeps one session for everyone.
      await call(a, "shared/remember", { value: "for-all" });
      expect(await call(b, "shared/recall")).toContain("value:for-all");
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});

describe("capgate mcp serve passes progress on", () => {
  it("forwards progress over stdio, and the call outlives timeoutMs", async () => {
    const box = sandbox({ mcpServers: { everything: CONFIG.mcpServers.everything } });
    const client = await stdioGateOn(box, box.workspace);
    try {
      const { r, reports } = await longCall(client);
      expect(r.isError, text(r)).toBeFalsy();
      expect(reports.length).toBeGreaterThanOrEqual(11);
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe("capgate serve --workspace DIR", () => {
  it("reads DIR/capgate.config.json, as mcp serve does, and says which file and servers it uses", async () => {
    const box = sandbox({});
    const config = join(box.workspace, "capgate.config.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { everything: everything() } }));
    // Started from elsewhere: the current directory has no config.
    const child = spawn(process.execPath, [CLI_BIN, "serve", "--workspace", box.workspace, "--port", "0"], {
      cwd: box.root,
      env: childEnv(box.home, { CAPGATE_TOKEN: TOKEN }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("viewer:")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`capgate serve exited with ${code}: ${out}`)));
      });
      expect(out).toContain(`config ${config}`);
      expect(out).toContain("MCP servers everything");
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    }
  }, 120_000);
});
