import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "./create-model.js";
import { chatCompletion, type FakeReply, type FakeServer, startFakeServer } from "./fake-provider-server.js";
import type { ModelOptions, ToolDefinition } from "./types.js";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(reply: FakeReply): Promise<FakeServer> {
  server = await startFakeServer(() => reply);
  return server;
}

function model(s: FakeServer, spec: string, options: ModelOptions = {}) {
  return createModel(spec, { env: { OPENAI_BASE_URL: `${s.url}/v1` }, maxRetries: 0, ...options });
}

// Shaped like two of the eight top-level tools the loop passes.
const tools: ToolDefinition[] = [
  {
    name: "capability_search",
    description: "Search the capability registry.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1 },
        limit: { type: "integer", minimum: 1, maximum: 20 },
      },
      required: ["query"],
      additionalProperties: false,
    },
  },
  {
    name: "finish",
    description: "Finish the goal.",
    inputSchema: {
      type: "object",
      properties: { summary: { type: "string" }, evidence: { type: "string" } },
      required: ["summary"],
      additionalProperties: false,
    },
  },
];

const request = { system: "sys", messages: [{ role: "user" as const, content: "find a git tool" }], tools };

describe("native tools (opt-in)", () => {
  it("sends the tool definitions with tool_choice required and returns the call as toolCall + canonical JSON", async () => {
    const s = await serve(
      chatCompletion({
        toolCalls: [{ name: "capability_search", arguments: '{"query":"git","limit":3}' }],
        usage: { prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 },
      }),
    );
    const m = model(s, "openai:test-model", { nativeTools: true });
    expect(m.nativeTools).toBe(true);
    const result = await m.generate(request);

    const body = s.requests[0]!.body;
    expect(body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "capability_search",
          description: tools[0]!.description,
          parameters: tools[0]!.inputSchema,
        },
      },
      {
        type: "function",
        function: { name: "finish", description: tools[1]!.description, parameters: tools[1]!.inputSchema },
      },
    ]);
    expect(body.tool_choice).toBe("required");
    expect(result.toolCall).toEqual({ name: "capability_search", arguments: { query: "git", limit: 3 } });
    expect(JSON.parse(result.text)).toEqual({
      name: "capability_search",
      arguments: { query: "git", limit: 3 },
    });
    expect(result.text).toBe('{"name":"capability_search","arguments":{"query":"git","limit":3}}');
    expect(result.usage).toEqual({ inputTokens: 50, outputTokens: 9, totalTokens: 59 });
    expect(result.finishReason).toBe("tool-calls");
  });

  it("passes arguments through unvalidated — the loop's parser judges them", async () => {
    const s = await serve(
      chatCompletion({ toolCalls: [{ name: "finish", arguments: '{"summry":"typo"}' }] }),
    );
    const result = await model(s, "openai:test-model?nativeTools=true").generate(request);
    expect(result.toolCall).toEqual({ name: "finish", arguments: { summry: "typo" } });
    expect(result.text).toBe('{"name":"finish","arguments":{"summry":"typo"}}');
  });

  it("keeps arguments that are not JSON as the raw string, and an unknown tool name as sent", async () => {
    const s = await serve(chatCompletion({ toolCalls: [{ name: "rm_rf", arguments: "{not json" }] }));
    const result = await model(s, "openai:test-model?nativeTools=true").generate(request);
    expect(result.toolCall).toEqual({ name: "rm_rf", arguments: "{not json" });
    expect(JSON.parse(result.text)).toEqual({ name: "rm_rf", arguments: "{not json" });
  });

  it("returns the first call when the model makes several", async () => {
    const s = await serve(
      chatCompletion({
        toolCalls: [
          { name: "capability_search", arguments: '{"query":"a"}' },
          { name: "finish", arguments: '{"summary":"b"}' },
        ],
      }),
    );
    const result = await model(s, "openai:test-model?nativeTools=true").generate(request);
    expect(result.toolCall?.name).toBe("capability_search");
  });

  it("returns the text when a server ignores tool_choice required", async () => {
    const s = await serve(chatCompletion({ text: '{"name":"finish","arguments":{"summary":"done"}}' }));
    const result = await model(s, "openai:test-model?nativeTools=true").generate(request);
    expect(result.toolCall).toBeUndefined();
    expect(result.text).toBe('{"name":"finish","arguments":{"summary":"done"}}');
  });

  it("toolChoice=auto in the spec sends tool_choice auto", async () => {
    const s = await serve(chatCompletion({ text: "plain" }));
    const result = await model(s, "openai:test-model?nativeTools=true&toolChoice=auto").generate(request);
    expect(s.requests[0]!.body.tool_choice).toBe("auto");
    expect(result.text).toBe("plain");
  });

  it("is off by default: tools passed to generate are not sent", async () => {
    const s = await serve(chatCompletion({ text: "text only" }));
    const m = model(s, "openai:test-model");
    expect(m.nativeTools).toBe(false);
    await m.generate(request);
    expect(s.requests[0]!.body.tools).toBeUndefined();
    expect(s.requests[0]!.body.tool_choice).toBeUndefined();
  });

  it("rejects a bad tool definition before sending anything", async () => {
    const s = await serve(chatCompletion({ text: "unused" }));
    const m = model(s, "openai:test-model?nativeTools=true");
    await expect(
      m.generate({
        ...request,
        tools: [{ name: "fs.read", description: "x", inputSchema: { type: "object" } }],
      }),
    ).rejects.toMatchObject({ code: "invalid_request", property: "tools[0].name" });
    await expect(
      m.generate({ ...request, tools: [tools[0]!, { ...tools[0]!, description: "again" }] }),
    ).rejects.toMatchObject({ code: "invalid_request", property: "tools[1].name" });
    await expect(
      m.generate({ ...request, tools: [{ name: "x", description: "x", inputSchema: { type: "string" } }] }),
    ).rejects.toMatchObject({ code: "invalid_request", property: "tools[0].inputSchema.type" });
    expect(s.requests).toHaveLength(0);
  });
});
