import { describe, expect, it } from "vitest";
import { ModelError } from "./errors.js";
import type { RetrySettings } from "./options.js";
import { backoffDelay, parseRetryAfter, withRetries } from "./retry.js";

describe("backoffDelay", () => {
  const settings = { retryDelayMs: 1000, maxRetryDelayMs: 30_000 };

  it("doubles per retry, with jitter between half and all of it", () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, settings, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, settings, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(2, settings, () => 0.5)).toBe(1500);
  });

  it("is capped", () => {
    expect(backoffDelay(10, settings, () => 1)).toBe(30_000);
    expect(backoffDelay(50, settings, () => 0)).toBe(15_000);
  });
});

describe("parseRetryAfter", () => {
  it("reads retry-after-ms first, then retry-after seconds or date, case-insensitively", () => {
    expect(parseRetryAfter({ "retry-after-ms": "250", "retry-after": "9" })).toBe(250);
    expect(parseRetryAfter({ "Retry-After": "2" })).toBe(2000);
    expect(parseRetryAfter({ "retry-after": "0.5" })).toBe(500);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }, now)).toBe(3000);
    expect(parseRetryAfter({ "retry-after": "Tue, 31 Dec 2024 23:59:00 GMT" }, now)).toBe(0);
  });

  it("ignores absent or unreadable values", () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter({})).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": "soon" })).toBeUndefined();
    expect(parseRetryAfter({ "retry-after-ms": "" })).toBeUndefined();
  });
});

describe("withRetries", () => {
  const settings: RetrySettings = {
    maxRetries: 2,
    retryDelayMs: 1,
    maxRetryDelayMs: 2,
    maxRetryAfterMs: 60_000,
    timeoutMs: 60_000,
    onRetry: undefined,
  };
  const classify = (error: unknown) => ({
    code: "model_http_error" as const,
    message: (error as Error).message,
    retryable: (error as Error).message === "retry me",
    cause: error,
  });

  it("returns the first success and counts attempts on failure", async () => {
    let calls = 0;
    const ok = await withRetries(
      async () => {
        calls++;
        if (calls < 3) throw new Error("retry me");
        return "done";
      },
      settings,
      { label: "t", signal: undefined, classify },
    );
    expect(ok).toBe("done");
    expect(calls).toBe(3);

    calls = 0;
    const error = await withRetries(
      async () => {
        calls++;
        throw new Error("retry me");
      },
      settings,
      { label: "t", signal: undefined, classify },
    ).catch((e: unknown) => e);
    expect(calls).toBe(3);
    expect(error).toMatchObject({ code: "model_http_error", attempts: 3 });
  });

  it("stops at once on a failure that is not retryable", async () => {
    let calls = 0;
    const error = await withRetries(
      async () => {
        calls++;
        throw new Error("fatal");
      },
      settings,
      { label: "t", signal: undefined, classify },
    ).catch((e: unknown) => e);
    expect(calls).toBe(1);
    expect(ModelError.isInstance(error) && error.attempts).toBe(1);
  });
});
