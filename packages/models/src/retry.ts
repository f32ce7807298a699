import { ModelError, type ModelErrorCode } from "./errors.js";
import type { RetrySettings } from "./options.js";

/** What one failed attempt means for the retry loop; produced by the provider's classifier. */
export interface AttemptFailure {
  code: ModelErrorCode;
  message: string;
  retryable: boolean;
  status?: number;
  /** The wait the server asked for (`retry-after-ms` / `retry-after`), in ms. */
  retryAfterMs?: number;
  cause: unknown;
}

export interface RetryContext {
  /** Names the model in messages, e.g. `openai:gpt-4o-mini`. */
  label: string;
  signal: AbortSignal | undefined;
  /** Turns whatever an attempt threw into an AttemptFailure; `timedOut` if our timer fired. */
  classify: (error: unknown, timedOut: boolean) => AttemptFailure;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or the retries run out.
 * Retryable: 429, 5xx, network errors, per-attempt timeouts. Waits exponential backoff with
 * jitter, or exactly what `retry-after` asks. The caller's signal ends it at any point,
 * including mid-wait, with a `model_aborted` error.
 */
export async function withRetries<T>(
  attempt: (signal: AbortSignal) => Promise<T>,
  settings: RetrySettings,
  context: RetryContext,
): Promise<T> {
  const { signal, label } = context;
  for (let attempts = 1; ; attempts++) {
    throwIfAborted(signal, label, attempts - 1);
    const timer = new AbortController();
    let timedOut = false;
    const timeout = setTimeout(() => {
      timedOut = true;
      timer.abort(
        new ModelError("model_timeout", `${label} did not answer within ${settings.timeoutMs} ms.`),
      );
    }, settings.timeoutMs);
    const attemptSignal = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal;
    let failure: AttemptFailure;
    try {
      return await attempt(attemptSignal);
    } catch (error) {
      if (signal?.aborted) throw abortedError(signal, label, attempts, error);
      failure = context.classify(error, timedOut);
    } finally {
      clearTimeout(timeout);
    }

    const retriesLeft = settings.maxRetries - (attempts - 1);
    if (!failure.retryable || retriesLeft <= 0) {
      const tail =
        failure.retryable && attempts > 1
          ? ` (gave up after ${attempts} attempts; maxRetries is ${settings.maxRetries})`
          : "";
      throw finalError(failure, `${failure.message}${tail}`, attempts);
    }
    if (failure.retryAfterMs !== undefined && failure.retryAfterMs > settings.maxRetryAfterMs) {
      throw finalError(
        failure,
        `${failure.message} (the server asked to retry after ${Math.ceil(failure.retryAfterMs / 1000)} s, more than maxRetryAfterMs ${settings.maxRetryAfterMs} ms, so the call ends here)`,
        attempts,
      );
    }
    const fromRetryAfter = failure.retryAfterMs !== undefined;
    const delayMs = fromRetryAfter ? failure.retryAfterMs! : backoffDelay(attempts, settings);
    settings.onRetry?.({
      retry: attempts,
      maxRetries: settings.maxRetries,
      delayMs,
      fromRetryAfter,
      status: failure.status,
      message: failure.message,
    });
    await sleep(delayMs, signal, label, attempts);
  }
}

function finalError(failure: AttemptFailure, message: string, attempts: number): ModelError {
  return new ModelError(failure.code, message, {
    ...(failure.status === undefined ? {} : { status: failure.status }),
    attempts,
    cause: failure.cause,
  });
}

/**
 * Backoff before retry `retry` (1-based): the base doubles each time up to the cap, then
 * "equal jitter" keeps it between half and all of that, so clients that failed together
 * do not retry together, yet never retry instantly.
 */
export function backoffDelay(
  retry: number,
  settings: Pick<RetrySettings, "retryDelayMs" | "maxRetryDelayMs">,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(settings.maxRetryDelayMs, settings.retryDelayMs * 2 ** (retry - 1));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

/**
 * The wait a response asks for: `retry-after-ms` (OpenAI) first, then `retry-after` as
 * seconds or an HTTP date. Header names are matched case-insensitively.
 */
export function parseRetryAfter(
  headers: Record<string, string | undefined> | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) => {
    for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value?.trim();
    return undefined;
  };
  const ms = get("retry-after-ms");
  if (ms !== undefined && ms !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = get("retry-after");
  if (after === undefined || after === "") return undefined;
  if (Number.isFinite(Number(after))) return Math.max(0, Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function throwIfAborted(signal: AbortSignal | undefined, label: string, attempts: number): void {
  if (signal?.aborted) throw abortedError(signal, label, attempts, undefined);
}

export function abortedError(
  signal: AbortSignal,
  label: string,
  attempts: number,
  error: unknown,
): ModelError {
  const reason: unknown = signal.reason;
  const why =
    reason instanceof Error && reason.name === "TimeoutError" ? " (the caller's timeout fired)" : "";
  return new ModelError("model_aborted", `The call to ${label} was aborted${why}.`, {
    attempts,
    cause: reason ?? error,
  });
}

function sleep(ms: number, signal: AbortSignal | undefined, label: string, attempts: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError(signal, label, attempts, undefined));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal!, label, attempts, undefined));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
