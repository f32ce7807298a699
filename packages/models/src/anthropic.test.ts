import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "./create-model.js";
import {
  anthropicError,
  anthropicMessage,
  type FakeReply,
  type FakeServer,
  startFakeServer,
} from "./fake-provider-server.js";
import type { ModelOptions, RetryInfo } from "./types.js";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(respond: (index: number) => FakeReply): Promise<FakeServer> {
  server = await startFakeServer((_req, index) => respond(index));
  return server;
}

function model(s: FakeServer, options: ModelOptions = {}, spec = "anthropic:claude-sonnet-4-5") {
  return createModel(spec, {
    env: { ANTHROPIC_BASE_URL: s.url, ANTHROPIC_API_KEY: "sk-ant-test" },
    retryDelayMs: 1,
    maxRetryDelayMs: 5,
    ...options,
  });
}

const conversation = {
  system: "You are a test.",
  messages: [
    { role: "user" as const, content: "first" },
    { role: "assistant" as const, content: "second" },
    { role: "user" as const, content: "third" },
  ],
};

describe("anthropic (Messages API)", () => {
  it("sends path, x-api-key, model, the system prompt as system and messages in order; parses text and usage", async () => {
    const s = await serve(() =>
      anthropicMessage({ text: "hi from claude", usage: { input_tokens: 20, output_tokens: 5 } }),
    );
    const m = model(s, { maxOutputTokens: 100, temperature: 0 });
    const result = await m.generate(conversation);

    expect(result).toEqual({
      text: "hi from claude",
      usage: { inputTokens: 20, outputTokens: 5, totalTokens: 25 },
      finishReason: "stop",
    });
    const req = s.requests[0]!;
    // A bare-origin ANTHROPIC_BASE_URL (Anthropic's convention) gets /v1.
    expect(req.path).toBe("/v1/messages");
    expect(req.headers["x-api-key"]).toBe("sk-ant-test");
    expect(req.headers["anthropic-version"]).toBeTypeOf("string");
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body.model).toBe("claude-sonnet-4-5");
    expect(req.body.max_tokens).toBe(100);
    expect(req.body.temperature).toBe(0);
    expect(req.body.system).toEqual([{ type: "text", text: "You are a test." }]);
    const messages = req.body.messages as Array<{
      role: string;
      content: Array<{ type: string; text: string }>;
    }>;
    expect(messages.map((msg) => [msg.role, msg.content.map((c) => c.text).join("")])).toEqual([
      ["user", "first"],
      ["assistant", "second"],
      ["user", "third"],
    ]);
    expect(m.describe()).toBe(`anthropic:claude-sonnet-4-5 via ${s.url}/v1`);
    expect(m.describe()).not.toContain("sk-ant-test");
  });

  it("keeps a base URL that already has a path", async () => {
    const s = await serve(() => anthropicMessage({ text: "ok" }));
    await model(s, { baseURL: `${s.url}/v1` }).generate(conversation);
    expect(s.requests[0]!.path).toBe("/v1/messages");
  });

  it("retries 529 overloaded and 429 with retry-after, then succeeds", async () => {
    const s = await serve((i) =>
      i === 0
        ? anthropicError(529, "overloaded_error", "Overloaded")
        : i === 1
          ? anthropicError(429, "rate_limit_error", "Too many requests", { "retry-after": "0" })
          : anthropicMessage({ text: "third time" }),
    );
    const retries: RetryInfo[] = [];
    const result = await model(s, { onRetry: (r) => retries.push(r) }).generate(conversation);
    expect(result.text).toBe("third time");
    expect(s.requests).toHaveLength(3);
    expect(retries.map((r) => [r.status, r.fromRetryAfter])).toEqual([
      [529, false],
      [429, true],
    ]);
    expect(retries[1]!.delayMs).toBe(0);
  });

  it("gives up after maxRetries 5xx", async () => {
    const s = await serve(() => anthropicError(500, "api_error", "Internal server error"));
    await expect(model(s, { maxRetries: 1 }).generate(conversation)).rejects.toMatchObject({
      code: "model_http_error",
      status: 500,
      attempts: 2,
    });
    expect(s.requests).toHaveLength(2);
  });

  it("reports 401 as model_auth naming ANTHROPIC_API_KEY, without retrying", async () => {
    const s = await serve(() => anthropicError(401, "authentication_error", "invalid x-api-key"));
    const promise = model(s).generate(conversation);
    await expect(promise).rejects.toMatchObject({ code: "model_auth", status: 401 });
    await expect(promise).rejects.toThrow(/ANTHROPIC_API_KEY/);
    expect(s.requests).toHaveLength(1);
  });

  it("does not retry a 400", async () => {
    const s = await serve(() =>
      anthropicError(400, "invalid_request_error", "messages: roles must alternate"),
    );
    await expect(model(s).generate(conversation)).rejects.toThrow(/roles must alternate/);
    expect(s.requests).toHaveLength(1);
  });

  it("aborts mid-request", async () => {
    const s = await serve(() => ({ hang: true }));
    const controller = new AbortController();
    const pending = model(s).generate({ ...conversation, signal: controller.signal });
    await s.waitForRequest(1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: "model_aborted", name: "AbortError" });
    await s.waitForClientClose(1);
  });

  it("native tools: sends tools with tool_choice any and no parallel use; a tool_use reply becomes toolCall", async () => {
    const s = await serve(() =>
      anthropicMessage({
        toolUse: { name: "capability_load", input: { name: "git" } },
        usage: { input_tokens: 9, output_tokens: 4 },
      }),
    );
    const schema = {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: false,
    };
    const result = await model(s, { nativeTools: true }).generate({
      ...conversation,
      tools: [{ name: "capability_load", description: "Load a capability.", inputSchema: schema }],
    });
    const body = s.requests[0]!.body;
    expect(body.tools).toEqual([
      { name: "capability_load", description: "Load a capability.", input_schema: schema },
    ]);
    expect(body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(result.toolCall).toEqual({ name: "capability_load", arguments: { name: "git" } });
    expect(result.text).toBe('{"name":"capability_load","arguments":{"name":"git"}}');
    expect(result.usage).toEqual({ inputTokens: 9, outputTokens: 4, totalTokens: 13 });
  });
});
