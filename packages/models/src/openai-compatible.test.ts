import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "./create-model.js";
import { isModelError, type ModelError } from "./errors.js";
import {
  chatCompletion,
  type FakeReply,
  type FakeServer,
  openaiError,
  startFakeServer,
} from "./fake-provider-server.js";
import type { ModelOptions, RetryInfo } from "./types.js";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(respond: (index: number) => FakeReply | Promise<FakeReply>): Promise<FakeServer> {
  server = await startFakeServer((_req, index) => respond(index));
  return server;
}

function model(s: FakeServer, options: ModelOptions = {}, spec = "openai:test-model") {
  return createModel(spec, {
    env: { OPENAI_BASE_URL: `${s.url}/v1`, OPENAI_API_KEY: "sk-test-123" },
    retryDelayMs: 1,
    maxRetryDelayMs: 5,
    ...options,
  });
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  try {
    await promise;
  } catch (error) {
    if (isModelError(error)) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

const conversation = {
  system: "You are a test.",
  messages: [
    { role: "user" as const, content: "first" },
    { role: "assistant" as const, content: "second" },
    { role: "user" as const, content: "third" },
  ],
};

describe("openai: with a base URL (Chat Completions via openai-compatible)", () => {
  it("sends path, model, bearer key, system and messages in order; parses text and usage", async () => {
    const s = await serve(() =>
      chatCompletion({
        text: "hello back",
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      }),
    );
    const m = model(s, { temperature: 0.2, maxOutputTokens: 64 });
    const result = await m.generate(conversation);

    expect(result).toEqual({
      text: "hello back",
      usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
      finishReason: "stop",
    });
    expect(s.requests).toHaveLength(1);
    const req = s.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-test-123");
    expect(req.body.model).toBe("test-model");
    expect(req.body.messages).toEqual([
      { role: "system", content: "You are a test." },
      { role: "user", content: "first" },
      { role: "assistant", content: "second" },
      { role: "user", content: "third" },
    ]);
    expect(req.body.temperature).toBe(0.2);
    expect(req.body.max_tokens).toBe(64);
    expect(req.body.tools).toBeUndefined();
  });

  it("sends no Authorization header when no key is set (Ollama, llama.cpp need none)", async () => {
    const s = await serve(() => chatCompletion({ text: "ok" }));
    const m = createModel("openai:llama3.1:8b", { env: { OPENAI_BASE_URL: `${s.url}/v1` } });
    expect(m.describe()).toBe(`openai:llama3.1:8b via ${s.url}/v1 (chat completions)`);
    const result = await m.generate({ system: "s", messages: [{ role: "user", content: "hi" }] });
    expect(result.text).toBe("ok");
    expect(result.usage).toBeUndefined();
    expect(s.requests[0]!.headers.authorization).toBeUndefined();
    expect(s.requests[0]!.body.model).toBe("llama3.1:8b");
  });

  it("the baseURL option wins over OPENAI_BASE_URL and describe() never shows the key", async () => {
    const s = await serve(() => chatCompletion({ text: "ok" }));
    const m = createModel("openai:test-model", {
      env: { OPENAI_BASE_URL: "http://127.0.0.1:1/v1", OPENAI_API_KEY: "sk-secret" },
      baseURL: `${s.url}/v1`,
    });
    expect(m.describe()).not.toContain("sk-secret");
    expect((await m.generate(conversation)).text).toBe("ok");
    expect(s.requests).toHaveLength(1);
  });

  it("retries a 429 and then succeeds", async () => {
    const s = await serve((i) =>
      i === 0 ? openaiError(429, "slow down") : chatCompletion({ text: "finally" }),
    );
    const retries: RetryInfo[] = [];
    const result = await model(s, { onRetry: (info) => retries.push(info) }).generate(conversation);
    expect(result.text).toBe("finally");
    expect(s.requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ retry: 1, maxRetries: 3, status: 429, fromRetryAfter: false });
    expect(retries[0]!.message).toContain("slow down");
  });

  it("waits exactly what retry-after-ms asks", async () => {
    const s = await serve((i) =>
      i === 0 ? openaiError(429, "later", { "retry-after-ms": "25" }) : chatCompletion({ text: "ok" }),
    );
    const retries: RetryInfo[] = [];
    await model(s, { onRetry: (info) => retries.push(info) }).generate(conversation);
    expect(retries.map((r) => [r.delayMs, r.fromRetryAfter])).toEqual([[25, true]]);
  });

  it("gives up at once when retry-after exceeds maxRetryAfterMs", async () => {
    const s = await serve(() => openaiError(429, "quota", { "retry-after": "120" }));
    const error = await failure(model(s, { maxRetryAfterMs: 1_000 }).generate(conversation));
    expect(error.code).toBe("model_rate_limited");
    expect(error.status).toBe(429);
    expect(error.message).toContain("retry after 120 s");
    expect(s.requests).toHaveLength(1);
  });

  it("retries 5xx up to maxRetries, then fails with status, attempts and the server's message", async () => {
    const s = await serve(() => openaiError(500, "the backend fell over"));
    const retries: number[] = [];
    const error = await failure(
      model(s, { maxRetries: 2, onRetry: (r) => retries.push(r.retry) }).generate(conversation),
    );
    expect(s.requests).toHaveLength(3);
    expect(retries).toEqual([1, 2]);
    expect(error.code).toBe("model_http_error");
    expect(error.status).toBe(500);
    expect(error.attempts).toBe(3);
    expect(error.message).toContain("HTTP 500");
    expect(error.message).toContain("the backend fell over");
    expect(error.message).toContain("gave up after 3 attempts");
  });

  it("defaults to 3 retries (4 requests)", async () => {
    const s = await serve(() => ({ status: 503, body: "upstream unavailable" }));
    const error = await failure(model(s).generate(conversation));
    expect(s.requests).toHaveLength(4);
    expect(error.status).toBe(503);
    expect(error.message).toContain("upstream unavailable");
  });

  it("does not retry a 400", async () => {
    const s = await serve(() => openaiError(400, "messages[1].content is not valid"));
    const error = await failure(model(s).generate(conversation));
    expect(s.requests).toHaveLength(1);
    expect(error.code).toBe("model_http_error");
    expect(error.status).toBe(400);
    expect(error.attempts).toBe(1);
    expect(error.message).toContain("messages[1].content is not valid");
  });

  it("reports 401 as model_auth naming OPENAI_API_KEY, without retrying", async () => {
    const s = await serve(() => openaiError(401, "Incorrect API key provided"));
    const error = await failure(model(s).generate(conversation));
    expect(s.requests).toHaveLength(1);
    expect(error.code).toBe("model_auth");
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(error.message).not.toContain("sk-test-123");
  });

  it("hints at the base URL on a 404", async () => {
    const s = await serve(() => ({ status: 404, body: "404 page not found" }));
    const error = await failure(model(s).generate(conversation));
    expect(error.status).toBe(404);
    expect(error.message).toContain("/v1");
    expect(error.message).toContain("OPENAI_BASE_URL");
  });

  it("retries when the connection drops", async () => {
    const s = await serve((i) => (i === 0 ? { destroy: true } : chatCompletion({ text: "reconnected" })));
    expect((await model(s).generate(conversation)).text).toBe("reconnected");
    expect(s.requests).toHaveLength(2);
  });

  it("fails with model_network when nothing listens, after retrying", async () => {
    const s = await serve(() => chatCompletion({ text: "unused" }));
    await s.close(); // the port is now free: connections are refused
    server = undefined;
    const retries: RetryInfo[] = [];
    const error = await failure(
      model(s, { maxRetries: 1, onRetry: (r) => retries.push(r) }).generate(conversation),
    );
    expect(error.code).toBe("model_network");
    expect(error.status).toBeUndefined();
    expect(error.attempts).toBe(2);
    expect(error.message).toContain(s.url);
    expect(retries).toHaveLength(1);
  });

  it("does not retry a 200 whose body is not a chat completion", async () => {
    const s = await serve(() => ({ body: { nope: true } }));
    const error = await failure(model(s).generate(conversation));
    expect(s.requests).toHaveLength(1);
    expect(error.code).toBe("model_bad_response");
  });

  it("aborts mid-request: rejects with model_aborted and cancels the HTTP request", async () => {
    const s = await serve(() => ({ hang: true }));
    const controller = new AbortController();
    const pending = model(s).generate({ ...conversation, signal: controller.signal });
    await s.waitForRequest(1);
    controller.abort();
    const error = await failure(pending);
    expect(error.code).toBe("model_aborted");
    expect(error.name).toBe("AbortError");
    await s.waitForClientClose(1);
    expect(s.requests).toHaveLength(1);
  });

  it("aborts during the backoff wait (a 59 s retry-after) without another request", async () => {
    const s = await serve(() => openaiError(429, "wait a minute", { "retry-after": "59" }));
    const controller = new AbortController();
    const error = await failure(
      model(s, { onRetry: () => setTimeout(() => controller.abort(), 20) }).generate({
        ...conversation,
        signal: controller.signal,
      }),
    );
    expect(error.code).toBe("model_aborted");
    expect(s.requests).toHaveLength(1);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const s = await serve(() => chatCompletion({ text: "unused" }));
    const error = await failure(model(s).generate({ ...conversation, signal: AbortSignal.abort() }));
    expect(error.code).toBe("model_aborted");
    expect(s.requests).toHaveLength(0);
  });

  it("times out a silent attempt and retries it", async () => {
    const s = await serve(() => ({ hang: true }));
    // The timeout leaves a busy machine time to deliver each attempt to the local server (counted below).
    const error = await failure(model(s, { timeoutMs: 2_000, maxRetries: 1 }).generate(conversation));
    expect(error.code).toBe("model_timeout");
    expect(error.attempts).toBe(2);
    expect(s.requests).toHaveLength(2);
  });

  it("rejects a malformed request before sending anything", async () => {
    const s = await serve(() => chatCompletion({ text: "unused" }));
    const m = model(s);
    const empty = await failure(m.generate({ system: "s", messages: [] }));
    expect(empty.code).toBe("invalid_request");
    expect(empty.property).toBe("messages");
    const role = await failure(
      m.generate({ system: "s", messages: [{ role: "system" as "user", content: "x" }] }),
    );
    expect(role.property).toBe("messages[0].role");
    expect(role.message).toContain('"user" or "assistant"');
    expect(s.requests).toHaveLength(0);
  });
});
