import { ModelError } from "./errors.js";
import type { ModelOptions, ProviderName } from "./types.js";

/** The provider prefixes `createModel` understands, in the order error messages list them. */
export const MODEL_PROVIDERS: readonly ProviderName[] = ["openai", "anthropic", "scripted"];

/** The options a spec string may set after `?`, e.g. `openai:gpt-4o-mini?nativeTools=true`. */
export const SPEC_QUERY_KEYS = [
  "nativeTools",
  "toolChoice",
  "temperature",
  "maxOutputTokens",
  "maxRetries",
  "timeoutMs",
  "api",
] as const;

type SpecQueryKey = (typeof SPEC_QUERY_KEYS)[number];
export type SpecQueryOptions = Pick<ModelOptions, SpecQueryKey>;

export interface ParsedModelSpec {
  provider: ProviderName;
  /** Everything after the first `:` and before `?` — a model name may itself hold `:` (`llama3.1:8b`). */
  model: string;
  /** Options from the query part; they override the options passed in code. */
  query: SpecQueryOptions;
}

const EXAMPLE = "openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or scripted:replies.json";

/** Splits `provider:model?key=value&…` and checks every part, naming what is wrong. */
export function parseModelSpec(spec: string): ParsedModelSpec {
  if (typeof spec !== "string" || spec.trim() === "") {
    throw new ModelError(
      "invalid_model_spec",
      `A model spec must be a non-empty string such as ${EXAMPLE}.`,
      {
        property: "model",
      },
    );
  }
  const trimmed = spec.trim();
  const colon = trimmed.indexOf(":");
  if (colon <= 0) {
    throw new ModelError(
      "invalid_model_spec",
      `Model spec "${trimmed}" has no provider prefix: write <provider>:<model>, e.g. ${EXAMPLE}. Valid providers: ${MODEL_PROVIDERS.join(", ")}.`,
      { property: "model" },
    );
  }
  const prefix = trimmed.slice(0, colon);
  const provider = MODEL_PROVIDERS.find((p) => p === prefix);
  if (provider === undefined) {
    const guess = closest(prefix.toLowerCase(), MODEL_PROVIDERS);
    throw new ModelError(
      "unknown_provider",
      `Unknown model provider "${prefix}" in "${trimmed}"${guess ? ` — did you mean "${guess}"?` : "."} Valid providers: ${MODEL_PROVIDERS.join(", ")}.`,
      { property: "model" },
    );
  }
  const rest = trimmed.slice(colon + 1);
  const mark = rest.indexOf("?");
  const model = (mark === -1 ? rest : rest.slice(0, mark)).trim();
  if (model === "") {
    const what = provider === "scripted" ? "file" : "model";
    throw new ModelError(
      "invalid_model_spec",
      `Model spec "${trimmed}" names no ${what}: write ${provider}:<${what}>, e.g. ${EXAMPLE}.`,
      { property: "model" },
    );
  }
  const query = mark === -1 ? {} : parseQuery(rest.slice(mark + 1), trimmed);
  return { provider, model, query };
}

function parseQuery(text: string, spec: string): SpecQueryOptions {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of new URLSearchParams(text)) {
    if (!(SPEC_QUERY_KEYS as readonly string[]).includes(key)) {
      const guess = closest(key, SPEC_QUERY_KEYS);
      throw new ModelError(
        "invalid_model_spec",
        `Unknown option "${key}" in model spec "${spec}"${guess ? ` — did you mean "${guess}"?` : "."} Options a spec may set: ${SPEC_QUERY_KEYS.join(", ")}.`,
        { property: `model?${key}` },
      );
    }
    if (key in out) {
      throw new ModelError("invalid_model_spec", `Option "${key}" appears twice in model spec "${spec}".`, {
        property: `model?${key}`,
      });
    }
    out[key] = convert(key as SpecQueryKey, raw, spec);
  }
  return out as SpecQueryOptions;
}

function convert(key: SpecQueryKey, raw: string, spec: string): unknown {
  const bad = (expected: string) =>
    new ModelError(
      "invalid_model_spec",
      `Option ${key}=${JSON.stringify(raw)} in model spec "${spec}" is not ${expected}.`,
      { property: `model?${key}` },
    );
  switch (key) {
    case "nativeTools":
      if (raw === "true" || raw === "1" || raw === "") return true;
      if (raw === "false" || raw === "0") return false;
      throw bad("true or false");
    case "toolChoice":
    case "api":
      return raw; // checked with the other options, so both routes give one message
    default: {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n)) throw bad("a number");
      return n;
    }
  }
}

/** The closest candidate within two edits, for "did you mean" hints. */
function closest(input: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(input.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
