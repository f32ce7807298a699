import { APICallError, InvalidArgumentError, InvalidPromptError } from "ai";
import { ModelError } from "./errors.js";
import type { AttemptFailure } from "./retry.js";
import { parseRetryAfter } from "./retry.js";

export interface ClassifyContext {
  /** e.g. `openai:gpt-4o-mini`. */
  label: string;
  /** The variable holding the key, named in auth errors. */
  keyEnvVar: string;
  /** The variable holding the base URL, named in 404 hints. */
  baseUrlEnvVar: string;
  timeoutMs: number;
}

/**
 * Maps what the AI SDK throws onto our codes and the retry policy: 429 and 5xx and network
 * failures and timeouts are retryable; every other 4xx and every unreadable response is not.
 * The SDK's own `isRetryable` is not used because it also retries 408 and 409.
 */
export function classifyError(error: unknown, timedOut: boolean, ctx: ClassifyContext): AttemptFailure {
  const { label } = ctx;
  if (timedOut) {
    return {
      code: "model_timeout",
      message: `${label} did not answer within ${ctx.timeoutMs} ms (timeoutMs).`,
      retryable: true,
      cause: error,
    };
  }
  if (ModelError.isInstance(error)) {
    return { code: error.code, message: error.message, retryable: false, cause: error };
  }
  if (APICallError.isInstance(error)) return classifyApiCallError(error, ctx);
  if (InvalidPromptError.isInstance(error) || InvalidArgumentError.isInstance(error)) {
    return {
      code: "invalid_request",
      message: `${label} refused the request before sending it: ${error.message}`,
      retryable: false,
      cause: error,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: "model_error", message: `${label} failed: ${message}`, retryable: false, cause: error };
}

function classifyApiCallError(error: APICallError, ctx: ClassifyContext): AttemptFailure {
  const { label } = ctx;
  const status = error.statusCode;
  if (status === undefined) {
    // No HTTP status: the request never got an answer (refused, reset, DNS…).
    return {
      code: "model_network",
      message: `${label} could not be reached at ${error.url}: ${error.message}`,
      retryable: error.isRetryable,
      cause: error,
    };
  }
  const detail = serverDetail(error);
  if (status >= 200 && status < 300) {
    const cause = error.cause instanceof Error ? error.cause.message : detail;
    return {
      code: "model_bad_response",
      message: `${label} answered HTTP ${status} from ${error.url} with a body that is not a valid response: ${clip(cause, 400)}`,
      status,
      retryable: false,
      cause: error,
    };
  }
  const retryAfterMs = parseRetryAfter(error.responseHeaders);
  const withRetryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status === 401 || status === 403) {
    return {
      code: "model_auth",
      message: `${label} rejected the credentials (HTTP ${status} from ${error.url}): ${detail} — check ${ctx.keyEnvVar} (or the apiKey option).`,
      status,
      retryable: false,
      cause: error,
    };
  }
  if (status === 429) {
    return {
      code: "model_rate_limited",
      message: `${label} is rate limited (HTTP 429 from ${error.url}): ${detail}`,
      status,
      retryable: true,
      ...withRetryAfter,
      cause: error,
    };
  }
  const hint =
    status === 404
      ? ` — check the model name and the base URL (${ctx.baseUrlEnvVar} or the baseURL option); OpenAI-compatible servers usually serve under /v1, e.g. http://localhost:11434/v1`
      : "";
  return {
    code: "model_http_error",
    message: `${label} answered HTTP ${status} from ${error.url}: ${detail}${hint}`,
    status,
    retryable: status >= 500,
    ...withRetryAfter,
    cause: error,
  };
}

/** The server's own words: the parsed error message, or a clip of the raw body. */
function serverDetail(error: APICallError): string {
  const body = error.responseBody?.replace(/\s+/g, " ").trim();
  if (error.data === undefined && body) return `${error.message || "error"} — ${clip(body, 300)}`;
  return error.message || "(no message)";
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
