import { ModelError } from "./errors.js";
import type { SpecQueryOptions } from "./spec.js";
import type { ModelOptions, OpenAIApi, RetryInfo, ToolChoiceMode } from "./types.js";

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_RETRY_DELAY_MS = 1_000;
export const DEFAULT_MAX_RETRY_DELAY_MS = 30_000;
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 600_000;

/** Options after defaults, spec query and checks: what the clients actually run with. */
export interface ResolvedOptions {
  env: Record<string, string | undefined>;
  apiKey: string | undefined;
  baseURL: string | undefined;
  api: OpenAIApi | undefined;
  headers: Record<string, string>;
  temperature: number | undefined;
  maxOutputTokens: number | undefined;
  nativeTools: boolean;
  toolChoice: ToolChoiceMode;
  retry: RetrySettings;
  cwd: string | undefined;
}

export interface RetrySettings {
  maxRetries: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  maxRetryAfterMs: number;
  timeoutMs: number;
  onRetry: ((info: RetryInfo) => void) | undefined;
}

const KNOWN_OPTIONS = new Set([
  "env",
  "apiKey",
  "baseURL",
  "api",
  "headers",
  "temperature",
  "maxOutputTokens",
  "nativeTools",
  "toolChoice",
  "maxRetries",
  "retryDelayMs",
  "maxRetryDelayMs",
  "maxRetryAfterMs",
  "timeoutMs",
  "onRetry",
  "cwd",
]);

/** Merges code options with the spec query (the query wins: it is what the user typed). */
export function resolveOptions(options: ModelOptions = {}, query: SpecQueryOptions = {}): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw invalid("options", options, "an object");
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new ModelError(
        "invalid_option",
        `Unknown model option "${key}". Known options: ${[...KNOWN_OPTIONS].join(", ")}.`,
        { property: key },
      );
    }
  }
  const o: ModelOptions = { ...options, ...query };
  const env =
    o.env ?? (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  if (typeof env !== "object" || env === null) throw invalid("env", env, "an object of strings");
  return {
    env,
    apiKey: optionalString(o, "apiKey"),
    baseURL: optionalString(o, "baseURL"),
    api: oneOf(o, "api", ["chat", "responses"] as const),
    headers: stringRecord(o, "headers"),
    temperature: number(o, "temperature", { min: 0, max: 2 }),
    maxOutputTokens: number(o, "maxOutputTokens", { min: 1, integer: true }),
    nativeTools: boolean(o, "nativeTools") ?? false,
    toolChoice: oneOf(o, "toolChoice", ["required", "auto"] as const) ?? "required",
    retry: {
      maxRetries: number(o, "maxRetries", { min: 0, max: 100, integer: true }) ?? DEFAULT_MAX_RETRIES,
      retryDelayMs: number(o, "retryDelayMs", { min: 0 }) ?? DEFAULT_RETRY_DELAY_MS,
      maxRetryDelayMs: number(o, "maxRetryDelayMs", { min: 0 }) ?? DEFAULT_MAX_RETRY_DELAY_MS,
      maxRetryAfterMs: number(o, "maxRetryAfterMs", { min: 0 }) ?? DEFAULT_MAX_RETRY_AFTER_MS,
      timeoutMs: number(o, "timeoutMs", { min: 1 }) ?? DEFAULT_TIMEOUT_MS,
      onRetry: optionalFunction(o, "onRetry"),
    },
    cwd: optionalString(o, "cwd"),
  };
}

function invalid(property: string, value: unknown, expected: string): ModelError {
  return new ModelError(
    "invalid_option",
    `Model option ${property} must be ${expected}; got ${describeValue(value)}.`,
    { property },
  );
}

export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

function optionalString(o: ModelOptions, key: keyof ModelOptions): string | undefined {
  const value = o[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") throw invalid(key, value, "a non-empty string");
  return value;
}

function boolean(o: ModelOptions, key: keyof ModelOptions): boolean | undefined {
  const value = o[key];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw invalid(key, value, "true or false");
  return value;
}

function oneOf<T extends string>(
  o: ModelOptions,
  key: keyof ModelOptions,
  allowed: readonly T[],
): T | undefined {
  const value = o[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalid(key, value, `one of ${allowed.map((a) => `"${a}"`).join(", ")}`);
  }
  return value as T;
}

function number(
  o: ModelOptions,
  key: keyof ModelOptions,
  rule: { min?: number; max?: number; integer?: boolean },
): number | undefined {
  const value = o[key];
  if (value === undefined) return undefined;
  const ok =
    typeof value === "number" &&
    Number.isFinite(value) &&
    (!rule.integer || Number.isInteger(value)) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max);
  if (!ok) {
    const range = rule.max === undefined ? `≥ ${rule.min ?? 0}` : `between ${rule.min ?? 0} and ${rule.max}`;
    throw invalid(key, value, `${rule.integer ? "an integer" : "a number"} ${range}`);
  }
  return value as number;
}

function stringRecord(o: ModelOptions, key: "headers"): Record<string, string> {
  const value = o[key];
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(key, value, "an object of header names to strings");
  }
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== "string") throw invalid(`${key}.${name}`, v, "a string");
  }
  return { ...value };
}

function optionalFunction<K extends "onRetry">(o: ModelOptions, key: K): ModelOptions[K] {
  const value = o[key];
  if (value === undefined) return undefined;
  if (typeof value !== "function") throw invalid(key, value, "a function");
  return value;
}
