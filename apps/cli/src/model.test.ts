import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, sandbox, script } from "./test-support/cli.js";

/** A local server speaking the OpenAI Chat Completions API, answering with `replies` in order. */
async function chatCompletionsServer(replies: string[]) {
  const requests: Array<{
    url: string;
    auth: string | undefined;
    body: { model: string; messages: Array<{ role: string; content: string }> };
  }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    let raw = "";
    req.on("data", (d) => {
      raw += d;
    });
    req.on("end", () => {
      requests.push({ url: req.url ?? "", auth: req.headers.authorization, body: JSON.parse(raw) });
      const content =
        replies[requests.length - 1] ?? '{"name":"mark_impossible","arguments":{"reason":"out of replies"}}';
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          id: `c${requests.length}`,
          object: "chat.completion",
          created: 0,
          model: "test-model",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => server.close(),
  };
}

describe("capgate run against an OpenAI-compatible endpoint", () => {
  it("talks Chat Completions to OPENAI_BASE_URL and finishes the goal", async () => {
    const box = sandbox({ runsCommands: true });
    writeFileSync(join(box.workspace, "greeting.txt"), "hello");
    const server = await chatCompletionsServer([
      '{"name":"capability_load","arguments":{"name":"fs"}}',
      '{"name":"capability_call","arguments":{"tool":"fs.read","arguments":{"path":"greeting.txt"}}}',
      '{"name":"verify","arguments":{"claim":"the greeting is there","command":"grep -q hello greeting.txt"}}',
      '{"name":"finish","arguments":{"summary":"greeting.txt says hello"}}',
    ]);
    try {
      box.env.OPENAI_BASE_URL = server.url;
      box.env.OPENAI_API_KEY = "sk-local";
      const r = await cli(
        ["run", "check the greeting file", "--profile", "Orchestrator", "--model", "openai:test-model"],
        box,
      );
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("greeting.txt says hello");
      expect(server.requests).toHaveLength(4);
      const first = server.requests[0];
      expect(first?.url).toBe("/v1/chat/completions");
      expect(first?.auth).toBe("Bearer sk-local");
      expect(first?.body.model).toBe("test-model");
      const system = first?.body.messages[0];
      expect(system?.role).toBe("system");
      expect(system?.content).toContain("do not finish without verification evidence.");
      expect(system?.content).toContain("capability_search(query: string, limit?: integer)");
      // The second request carries the first action and what the gate answered.
      const second = server.requests[1]?.body.messages.map((m) => m.content).join("\n") ?? "";
      expect(second).toContain("Loaded fs");
    } finally {
      server.close();
    }
  });
});

describe("capgate chat", () => {
  it("reads messages from a pipe, switches profile, and answers each", async () => {
    const box = sandbox({ runsCommands: true });
    const s = script(box, [
      ["verify", { claim: "fine", command: "true" }],
      ["finish", { summary: "first answer" }],
      ["finish", { summary: "second answer" }],
    ]);
    const r = await cli(["chat", "--model", `scripted:${s}`, "--quiet"], box, {
      input: "hello\n/profile Researcher\n/tools\nagain\n/exit\n",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("first answer");
    expect(r.stdout).toContain("profile Researcher");
    expect(r.stdout).toContain("web.fetch(url: string, max_bytes?: integer)");
    expect(r.stdout).toContain("second answer");
  });

  it("--json makes the chat an event stream of JSON lines", async () => {
    const box = sandbox({ runsCommands: true });
    const s = script(box, [
      ["verify", { claim: "fine", command: "true" }],
      ["finish", { summary: "the answer" }],
    ]);
    const r = await cli(["chat", "--model", `scripted:${s}`, "--json"], box, { input: "hello\n/exit\n" });
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; reply?: string });
    expect(lines.some((l) => l.type === "verified")).toBe(true);
    expect(lines.find((l) => l.type === "chat_reply")).toMatchObject({ reply: "the answer" });
    expect(lines.at(-1)?.type).toBe("run_ended");
  });
});
