import { describe, expect, it } from "vitest";
import { createModel } from "./create-model.js";
import { isModelError, ModelError } from "./errors.js";
import { parseModelSpec } from "./spec.js";

function thrown(fn: () => unknown): ModelError {
  try {
    fn();
  } catch (error) {
    if (isModelError(error)) return error;
    throw error;
  }
  throw new Error("expected an error");
}

describe("parseModelSpec", () => {
  it("splits provider and model at the first colon, so model names may hold colons", () => {
    expect(parseModelSpec("openai:gpt-4o-mini")).toEqual({
      provider: "openai",
      model: "gpt-4o-mini",
      query: {},
    });
    expect(parseModelSpec("openai:qwen2.5-coder:7b").model).toBe("qwen2.5-coder:7b");
    expect(parseModelSpec(" anthropic:claude-sonnet-4-5 ").provider).toBe("anthropic");
    expect(parseModelSpec("scripted:./fixtures/a.json").model).toBe("./fixtures/a.json");
  });

  it("reads options from the query part", () => {
    expect(
      parseModelSpec(
        "openai:m?nativeTools=true&toolChoice=auto&temperature=0&maxOutputTokens=256&maxRetries=5&timeoutMs=1000&api=chat",
      ).query,
    ).toEqual({
      nativeTools: true,
      toolChoice: "auto",
      temperature: 0,
      maxOutputTokens: 256,
      maxRetries: 5,
      timeoutMs: 1000,
      api: "chat",
    });
    expect(parseModelSpec("openai:m?nativeTools").query).toEqual({ nativeTools: true });
  });

  it("lists the valid providers for an unknown prefix, with a suggestion", () => {
    const error = thrown(() => parseModelSpec("opneai:gpt-4o"));
    expect(error.code).toBe("unknown_provider");
    expect(error.message).toContain('"opneai"');
    expect(error.message).toContain('did you mean "openai"');
    expect(error.message).toContain("openai, anthropic, scripted");
    expect(thrown(() => parseModelSpec("gemini:pro")).message).toContain(
      "Valid providers: openai, anthropic, scripted",
    );
  });

  it("names what is missing or wrong", () => {
    expect(thrown(() => parseModelSpec("gpt-4o")).code).toBe("invalid_model_spec");
    expect(thrown(() => parseModelSpec("gpt-4o")).message).toContain("no provider prefix");
    expect(thrown(() => parseModelSpec("")).code).toBe("invalid_model_spec");
    expect(thrown(() => parseModelSpec("openai:")).message).toContain("names no model");
    expect(thrown(() => parseModelSpec("scripted:")).message).toContain("names no file");
    const unknown = thrown(() => parseModelSpec("openai:m?temprature=0"));
    expect(unknown.message).toContain('did you mean "temperature"');
    expect(unknown.property).toBe("model?temprature");
    expect(thrown(() => parseModelSpec("openai:m?temperature=hot")).message).toContain('temperature="hot"');
    expect(thrown(() => parseModelSpec("openai:m?nativeTools=yes")).message).toContain("true or false");
    expect(thrown(() => parseModelSpec("openai:m?maxRetries=1&maxRetries=2")).message).toContain("twice");
  });
});

describe("createModel", () => {
  it("names the env var when the API key is missing", () => {
    const openai = thrown(() => createModel("openai:gpt-4o", { env: {} }));
    expect(openai.code).toBe("missing_api_key");
    expect(openai.message).toContain("OPENAI_API_KEY");
    expect(openai.message).toContain("OPENAI_BASE_URL");
    const anthropic = thrown(() =>
      createModel("anthropic:claude-sonnet-4-5", { env: { OPENAI_API_KEY: "x" } }),
    );
    expect(anthropic.code).toBe("missing_api_key");
    expect(anthropic.message).toContain("ANTHROPIC_API_KEY");
    // An empty variable counts as missing.
    expect(thrown(() => createModel("openai:gpt-4o", { env: { OPENAI_API_KEY: " " } })).code).toBe(
      "missing_api_key",
    );
  });

  it("takes the key from the apiKey option", () => {
    const model = createModel("anthropic:claude-sonnet-4-5", { env: {}, apiKey: "k" });
    expect(model.provider).toBe("anthropic");
    expect(model.model).toBe("claude-sonnet-4-5");
    expect(model.nativeTools).toBe(false);
    expect(model.describe()).toBe("anthropic:claude-sonnet-4-5");
  });

  it("lets the spec query override code options", () => {
    const model = createModel("openai:m?nativeTools=false", {
      env: { OPENAI_API_KEY: "k" },
      nativeTools: true,
    });
    expect(model.nativeTools).toBe(false);
  });

  it("rejects bad options naming the option", () => {
    const env = { OPENAI_API_KEY: "k" };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ maxRetries: -1 }, "maxRetries"],
      [{ maxRetries: 1.5 }, "maxRetries"],
      [{ temperature: "warm" }, "temperature"],
      [{ maxOutputTokens: 0 }, "maxOutputTokens"],
      [{ toolChoice: "any" }, "toolChoice"],
      [{ api: "completions" }, "api"],
      [{ headers: { "x-a": 1 } }, "headers.x-a"],
      [{ retryDelay: 5 }, "retryDelay"],
      [{ baseURL: "localhost:11434" }, "baseURL"],
      [{ onRetry: "log" }, "onRetry"],
    ];
    for (const [options, property] of cases) {
      const error = thrown(() => createModel("openai:m", { env, ...options }));
      expect(error.code, property).toBe("invalid_option");
      expect(error.property, property).toBe(property);
    }
    expect(thrown(() => createModel("openai:m?toolChoice=any", { env })).message).toContain(
      '"required", "auto"',
    );
    expect(
      thrown(() => createModel("anthropic:c?api=chat", { env: { ANTHROPIC_API_KEY: "k" } })).property,
    ).toBe("api");
  });

  it("names OPENAI_BASE_URL when the variable is not a URL", () => {
    const error = thrown(() => createModel("openai:m", { env: { OPENAI_BASE_URL: "ftp://x" } }));
    expect(error.property).toBe("OPENAI_BASE_URL");
    expect(error.message).toContain("http or https");
  });

  it("hides credentials in a base URL from describe()", () => {
    const model = createModel("openai:m", {
      env: { OPENAI_BASE_URL: "https://user:secret@proxy.example/v1?key=abc" },
    });
    expect(model.describe()).toBe("openai:m via https://proxy.example/v1 (chat completions)");
  });

  it("ModelError is recognised across copies and serialises its fields", () => {
    const error = new ModelError("model_http_error", "boom", { status: 500, attempts: 4 });
    expect(ModelError.isInstance(error)).toBe(true);
    expect(ModelError.isInstance(new Error("x"))).toBe(false);
    // The same marker as @capgate/schema's CapgateError, so its isInstance accepts it too.
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for("capgate.error")]).toBe(true);
    expect(error.toJSON()).toEqual({ code: "model_http_error", message: "boom", status: 500, attempts: 4 });
    expect(new ModelError("model_aborted", "stop").name).toBe("AbortError");
  });
});
