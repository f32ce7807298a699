import type { LanguageModel } from "ai";
import type { AiSdkClientConfig } from "./ai-sdk-client.js";
import { ModelError } from "./errors.js";
import type { ResolvedOptions } from "./options.js";
import type { CreatedModel } from "./types.js";

const OPENAI_URL = "https://api.openai.com/v1";
const ANTHROPIC_URL = "https://api.anthropic.com/v1";

/**
 * `openai:<model>`. With a base URL (OPENAI_BASE_URL or `baseURL`) it speaks Chat Completions
 * through @ai-sdk/openai-compatible — the dialect every compatible server implements (Ollama,
 * vLLM, llama.cpp, LM Studio, OpenRouter) — and a key is optional, since local servers need
 * none. Without one it talks to api.openai.com through @ai-sdk/openai's Responses API (its
 * default) and a key is required. `api` picks the endpoint explicitly.
 */
export function createOpenAIModel(model: string, options: ResolvedOptions): CreatedModel {
  const baseURL = checkUrl(
    options.baseURL ?? nonEmpty(options.env.OPENAI_BASE_URL),
    options.baseURL ? "baseURL" : "OPENAI_BASE_URL",
  );
  const apiKey = options.apiKey ?? nonEmpty(options.env.OPENAI_API_KEY);
  const api = options.api ?? (baseURL ? "chat" : "responses");
  if (!baseURL && !apiKey) {
    throw new ModelError(
      "missing_api_key",
      `openai:${model} needs an API key: set OPENAI_API_KEY (or pass the apiKey option). For a local OpenAI-compatible server such as Ollama, set OPENAI_BASE_URL instead, e.g. http://localhost:11434/v1.`,
      { property: "OPENAI_API_KEY" },
    );
  }
  const where = baseURL ? ` via ${displayUrl(baseURL)}` : "";
  const common = {
    provider: "openai" as const,
    model,
    options,
    keyEnvVar: "OPENAI_API_KEY",
    baseUrlEnvVar: "OPENAI_BASE_URL",
  };

  if (baseURL && api === "chat") {
    return lazyAiSdkClient({
      ...common,
      languageModel: async () => {
        const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
        const provider = createOpenAICompatible({
          name: "openai-compatible",
          baseURL,
          ...(apiKey ? { apiKey } : {}),
          headers: options.headers,
        });
        return provider.chatModel(model);
      },
      description: `openai:${model}${where} (chat completions)`,
      providerOptions: () => undefined,
    });
  }

  // An explicit baseURL keeps @ai-sdk/openai from reading OPENAI_BASE_URL from process.env
  // behind our back when the caller passed its own `env`.
  const responses = api === "responses";
  return lazyAiSdkClient({
    ...common,
    languageModel: async () => {
      const { createOpenAI } = await import("@ai-sdk/openai");
      const provider = createOpenAI({
        apiKey: apiKey ?? "",
        baseURL: baseURL ?? OPENAI_URL,
        headers: options.headers,
      });
      return responses ? provider.responses(model) : provider.chat(model);
    },
    description: `openai:${model}${where} (${responses ? "responses API" : "chat completions"})`,
    providerOptions: (withTools) => ({
      // We never refer back to a stored response, so do not ask OpenAI to keep one.
      openai: { ...(responses ? { store: false } : {}), ...(withTools ? { parallelToolCalls: false } : {}) },
    }),
  });
}

/**
 * `anthropic:<model>` over the Messages API. A key is always required. ANTHROPIC_BASE_URL
 * follows Anthropic's own convention (a bare origin, no /v1) as well as the AI SDK's (with
 * /v1): a URL with no path gets /v1 appended.
 */
export function createAnthropicModel(model: string, options: ResolvedOptions): CreatedModel {
  const rawUrl = checkUrl(
    options.baseURL ?? nonEmpty(options.env.ANTHROPIC_BASE_URL),
    options.baseURL ? "baseURL" : "ANTHROPIC_BASE_URL",
  );
  const apiKey = options.apiKey ?? nonEmpty(options.env.ANTHROPIC_API_KEY);
  if (!apiKey) {
    throw new ModelError(
      "missing_api_key",
      `anthropic:${model} needs an API key: set ANTHROPIC_API_KEY (or pass the apiKey option).`,
      { property: "ANTHROPIC_API_KEY" },
    );
  }
  if (options.api !== undefined) {
    throw new ModelError(
      "invalid_option",
      `Model option api applies to openai models only, not anthropic:${model}.`,
      {
        property: "api",
      },
    );
  }
  const baseURL = rawUrl ? withVersionPath(rawUrl) : ANTHROPIC_URL;
  return lazyAiSdkClient({
    provider: "anthropic",
    model,
    languageModel: async () => {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ apiKey, baseURL, headers: options.headers }).languageModel(model);
    },
    options,
    description: `anthropic:${model}${rawUrl ? ` via ${displayUrl(baseURL)}` : ""}`,
    keyEnvVar: "ANTHROPIC_API_KEY",
    baseUrlEnvVar: "ANTHROPIC_BASE_URL",
    providerOptions: (withTools) => (withTools ? { anthropic: { disableParallelToolUse: true } } : undefined),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function checkUrl(value: string | undefined, property: string): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ModelError(
      "invalid_option",
      `${property} must be an http(s) URL such as http://localhost:11434/v1; got ${JSON.stringify(value)}.`,
      {
        property,
      },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ModelError(
      "invalid_option",
      `${property} must use http or https; got ${JSON.stringify(value)}.`,
      {
        property,
      },
    );
  }
  return value.replace(/\/+$/, "");
}

function withVersionPath(url: string): string {
  return new URL(url).pathname.replace(/\/+$/, "") === "" ? `${url}/v1` : url;
}

/** A URL fit for logs: no user:password, no query string. */
function displayUrl(url: string): string {
  const u = new URL(url);
  u.username = "";
  u.password = "";
  u.search = "";
  return u.toString().replace(/\/+$/, "");
}

type LazyClientConfig = Omit<AiSdkClientConfig, "languageModel"> & {
  languageModel: () => Promise<LanguageModel>;
};

/**
 * Everything is checked now (spec, options, key, URL), but the AI SDK and the provider
 * package load on the first call: a CLI command that never talks to a model does not pay
 * for them at startup.
 */
function lazyAiSdkClient(config: LazyClientConfig): CreatedModel {
  let client: Promise<CreatedModel> | undefined;
  const load = (): Promise<CreatedModel> => {
    client ??= Promise.all([import("./ai-sdk-client.js"), config.languageModel()]).then(
      ([sdk, languageModel]) => sdk.createAiSdkClient({ ...config, languageModel }),
    );
    client.catch(() => {
      client = undefined;
    });
    return client;
  };
  return {
    provider: config.provider,
    model: config.model,
    nativeTools: config.options.nativeTools,
    describe: () => config.description,
    generate: async (request) => (await load()).generate(request),
  };
}
