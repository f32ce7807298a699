import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "./create-model.js";
import {
  type FakeReply,
  type FakeServer,
  openaiError,
  responsesReply,
  startFakeServer,
} from "./fake-provider-server.js";
import type { ModelOptions } from "./types.js";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(respond: (index: number) => FakeReply): Promise<FakeServer> {
  server = await startFakeServer((_req, index) => respond(index));
  return server;
}

// `api=responses` with a base URL drives the same @ai-sdk/openai Responses model that talks to
// api.openai.com when no base URL is set.
function model(s: FakeServer, options: ModelOptions = {}) {
  return createModel("openai:gpt-4o-mini?api=responses", {
    env: { OPENAI_BASE_URL: `${s.url}/v1`, OPENAI_API_KEY: "sk-official" },
    retryDelayMs: 1,
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

describe("openai: Responses API (the default against api.openai.com)", () => {
  it("is what an openai model without a base URL uses", () => {
    const m = createModel("openai:gpt-4o-mini", { env: { OPENAI_API_KEY: "sk-official" } });
    expect(m.describe()).toBe("openai:gpt-4o-mini (responses API)");
    const chat = createModel("openai:gpt-4o-mini?api=chat", { env: { OPENAI_API_KEY: "sk-official" } });
    expect(chat.describe()).toBe("openai:gpt-4o-mini (chat completions)");
  });

  it("posts /responses with the key, model, system and messages in order, store off; parses text and usage", async () => {
    const s = await serve(() =>
      responsesReply({
        text: "from responses",
        usage: { input_tokens: 30, output_tokens: 6, total_tokens: 36 },
      }),
    );
    const m = model(s);
    expect(m.describe()).toBe(`openai:gpt-4o-mini via ${s.url}/v1 (responses API)`);
    const result = await m.generate(conversation);
    expect(result.text).toBe("from responses");
    expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 6, totalTokens: 36 });

    const req = s.requests[0]!;
    expect(req.path).toBe("/v1/responses");
    expect(req.headers.authorization).toBe("Bearer sk-official");
    expect(req.body.model).toBe("gpt-4o-mini");
    expect(req.body.store).toBe(false);
    const input = req.body.input as Array<{ role: string; content: string | Array<{ text: string }> }>;
    const text = (c: string | Array<{ text: string }>) =>
      typeof c === "string" ? c : c.map((p) => p.text).join("");
    expect(input.map((item) => [item.role, text(item.content)])).toEqual([
      ["system", "You are a test."],
      ["user", "first"],
      ["assistant", "second"],
      ["user", "third"],
    ]);
  });

  it("retries a 429 then succeeds", async () => {
    const s = await serve((i) => (i === 0 ? openaiError(429, "rate") : responsesReply({ text: "ok" })));
    expect((await model(s).generate(conversation)).text).toBe("ok");
    expect(s.requests).toHaveLength(2);
  });

  it("native tools: sends function tools, no parallel calls; a function_call becomes toolCall", async () => {
    const s = await serve(() =>
      responsesReply({ toolCall: { name: "verify", arguments: '{"claim":"c","command":"npm test"}' } }),
    );
    const schema = {
      type: "object",
      properties: { claim: { type: "string" }, command: { type: "string" } },
      required: ["claim", "command"],
      additionalProperties: false,
    };
    const result = await model(s, { nativeTools: true }).generate({
      ...conversation,
      tools: [{ name: "verify", description: "Run a check.", inputSchema: schema }],
    });
    const body = s.requests[0]!.body;
    expect(body.tools).toMatchObject([
      { type: "function", name: "verify", description: "Run a check.", parameters: schema },
    ]);
    expect(body.tool_choice).toBe("required");
    expect(body.parallel_tool_calls).toBe(false);
    expect(result.toolCall).toEqual({ name: "verify", arguments: { claim: "c", command: "npm test" } });
    expect(result.text).toBe('{"name":"verify","arguments":{"claim":"c","command":"npm test"}}');
  });
});
