/** One turn of the conversation. The system prompt travels separately, as `system`. */
export interface ChatMessage {
  role: "user" | "assistant";
  content: string;
  /** Images for a user message (base64), sent as image parts to providers that read them; others get `content` only. */
  images?: ChatImage[];
}

/** One image of a message: base64 data and its media type (e.g. `image/png`). */
export interface ChatImage {
  data: string;
  mimeType: string;
}

/**
 * A tool offered to the provider as a native function/tool definition. `inputSchema` is a
 * plain JSON Schema; nothing is executed here — the caller validates and runs the call.
 */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface GenerateRequest {
  system: string;
  messages: ChatMessage[];
  /** Aborts the call at any point: during the request and while waiting to retry. */
  signal?: AbortSignal;
  /** Used only by a model created with `nativeTools: true`; ignored otherwise. */
  tools?: ToolDefinition[];
}

/** Token counts as the provider reported them; a count the provider left out stays undefined. */
export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

/** A native tool call. `arguments` is the parsed JSON input, or the raw string if it was not JSON. */
export interface ModelToolCall {
  name: string;
  arguments: unknown;
}

export interface GenerateResult {
  /**
   * The reply. For a native tool call this is the canonical action
   * `{"name": …, "arguments": …}`, so it goes through the same strict parser as plain text.
   */
  text: string;
  toolCall?: ModelToolCall;
  usage?: TokenUsage;
  /** Why the model stopped (`stop`, `length`, `tool-calls`, …) when the provider said. */
  finishReason?: string;
}

/** What the loop needs from a model. Anything with this shape can drive a run. */
export interface ModelClient {
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** A one-line description for logs: provider and model, never a key. */
  describe?(): string;
}

export type ProviderName = "openai" | "anthropic" | "scripted";

/** A model made by `createModel`: a ModelClient that also says what it is. */
export interface CreatedModel extends ModelClient {
  readonly provider: ProviderName;
  /** The model name (for `scripted`, the script's path or `(in memory)`). */
  readonly model: string;
  /** Whether `tools` passed to `generate` are sent to the provider as native tools. */
  readonly nativeTools: boolean;
  describe(): string;
}

/** Passed to `onRetry` before each wait, so callers can log or show progress. */
export interface RetryInfo {
  /** The retry about to happen, 1-based. */
  retry: number;
  maxRetries: number;
  delayMs: number;
  /** Whether `delayMs` came from the server's `retry-after` / `retry-after-ms` header. */
  fromRetryAfter: boolean;
  status: number | undefined;
  message: string;
}

export type ToolChoiceMode = "required" | "auto";

/** Which OpenAI endpoint to talk to: Chat Completions or the Responses API. */
export type OpenAIApi = "chat" | "responses";

export interface ModelOptions {
  /** Where API keys and base URLs are read from. Default: `process.env`. */
  env?: Record<string, string | undefined>;
  /** Overrides `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** Overrides `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`. */
  baseURL?: string;
  /** openai only. Default: `chat` with a base URL, `responses` against api.openai.com. */
  api?: OpenAIApi;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  temperature?: number;
  maxOutputTokens?: number;
  /** Send `generate({ tools })` to the provider as native tools. Default false. */
  nativeTools?: boolean;
  /** With native tools: must the model call one (`required`, default) or may it answer in text? */
  toolChoice?: ToolChoiceMode;
  /** Retries after a 429, a 5xx, a network error or a timeout. Default 3. */
  maxRetries?: number;
  /** First backoff delay; doubles each retry, with jitter. Default 1000. */
  retryDelayMs?: number;
  /** Cap on one backoff delay. Default 30000. */
  maxRetryDelayMs?: number;
  /** A `retry-after` longer than this ends the call instead of waiting. Default 60000. */
  maxRetryAfterMs?: number;
  /** Per-attempt timeout; a timed-out attempt counts as retryable. Default 600000 (10 min). */
  timeoutMs?: number;
  onRetry?: (info: RetryInfo) => void;
  /** Directory that a relative `scripted:<file>` path is resolved against. Default: the process cwd. */
  cwd?: string;
}
