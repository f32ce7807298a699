import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { Ajv2020 } from "ajv/dist/2020.js";
import { AJV_OPTIONS, ANONYMOUS_BASE, isDraft07, rooted } from "./ajv-options.js";
import type { JsonSchema } from "./json-schema.js";
import { stableStringify } from "./stable-hash.js";
import { closestMatch } from "./suggest.js";

export interface ValidationIssue {
  /** Path of the offending value, e.g. `path`, `paths[0]`, `options.depth`; "" for the root. */
  property: string;
  message: string;
}

export type ValidationResult = { ok: true } | { ok: false; errors: ValidationIssue[] };

interface AjvModules {
  Ajv: typeof Ajv;
  Ajv2020: typeof Ajv2020;
  addFormats: (ajv: Ajv | Ajv2020) => void;
}

let ajvModules: AjvModules | undefined;

/**
 * ajv's compiler (about ninety modules), loaded with the first schema compiled: a process
 * whose schemas all have precompiled validators (a `capgate call` of a built-in tool) never
 * loads it. Loaded with `require` through `process.getBuiltinModule`, so that `validate`
 * stays synchronous and the package imports no Node built-in.
 */
function loadAjv(): AjvModules {
  if (ajvModules) return ajvModules;
  const getBuiltinModule = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process?.getBuiltinModule;
  if (typeof getBuiltinModule !== "function") {
    throw new Error(
      "compiling a JSON Schema needs a runtime with process.getBuiltinModule (Node.js, Deno, Bun); here only schemas with precompiled validators can be checked",
    );
  }
  const { createRequire } = getBuiltinModule("node:module") as {
    createRequire: (from: string) => (id: string) => unknown;
  };
  const requireHere = createRequire(import.meta.url);
  const formats = requireHere("ajv-formats") as { default?: unknown };
  ajvModules = {
    Ajv: (requireHere("ajv") as { Ajv: typeof Ajv }).Ajv,
    Ajv2020: (requireHere("ajv/dist/2020.js") as { Ajv2020: typeof Ajv2020 }).Ajv2020,
    // ajv-formats is CommonJS with a default export; normalise both shapes.
    addFormats: (formats.default ?? formats) as AjvModules["addFormats"],
  };
  return ajvModules;
}

/** The compilers: [all errors (the default), first error only (values too large to list every error of)]. */
const engines: { ajv2020?: Ajv2020; ajv07?: Ajv }[] = [{}, {}];

function engineFor(schema: JsonSchema, firstErrorOnly = false): Ajv | Ajv2020 {
  const { Ajv, Ajv2020, addFormats } = loadAjv();
  const slot = engines[firstErrorOnly ? 1 : 0] as { ajv2020?: Ajv2020; ajv07?: Ajv };
  const options = firstErrorOnly ? { ...AJV_OPTIONS, allErrors: false } : AJV_OPTIONS;
  if (isDraft07(schema)) {
    if (!slot.ajv07) {
      slot.ajv07 = new Ajv(options);
      addFormats(slot.ajv07);
    }
    return slot.ajv07;
  }
  if (!slot.ajv2020) {
    slot.ajv2020 = new Ajv2020(options);
    addFormats(slot.ajv2020);
  }
  return slot.ajv2020;
}

/**
 * Values (array items and object members, at any depth) past which a value is checked for
 * its first error only. Listing every error costs time per error — a 2,000,000-item array
 * of the wrong type made 2,000,001 of them, 14 s of the host's only thread, and a model
 * writes the arguments — so a value this large gets the first problem named, which is
 * what the caller needs to fix it; a smaller one gets them all.
 */
const ALL_ERRORS_MAX_VALUES = 10_000;

/**
 * Whether `value` holds more than `limit` values — array items and object members at any
 * depth — counting no further than the limit (`for…in`, not `Object.values`: the values
 * array of a 300,000-key object alone took 285 ms). Work on a value that grows with its
 * count (copying it, checking it, listing its errors) is bounded by asking this first.
 */
export function holdsMoreValuesThan(value: unknown, limit: number): boolean {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== "object" || current === null) continue;
    if (Array.isArray(current)) {
      count += current.length;
      if (count > limit) return true;
      for (const child of current) if (typeof child === "object" && child !== null) stack.push(child);
      continue;
    }
    for (const key in current) {
      if (++count > limit) return true;
      const child = (current as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) stack.push(child);
    }
  }
  return false;
}

/** First-error validators by schema text (compiled only when a large value arrives). */
const firstErrorByHash = new Map<string, ValidateFunction>();

function firstErrorValidator(schema: JsonSchema | object): ValidateFunction {
  const hash = stableStringify(schema);
  let fn = firstErrorByHash.get(hash);
  if (!fn) {
    fn = compileOne(schema as JsonSchema, true);
    if (firstErrorByHash.size >= MAX_CACHED) {
      const oldest = firstErrorByHash.keys().next().value;
      if (oldest !== undefined) firstErrorByHash.delete(oldest);
    }
    firstErrorByHash.set(hash, fn);
  }
  return fn;
}

const MAX_CACHED = 4096;
const byHash = new Map<string, ValidateFunction>();
const byIdentity = new WeakMap<object, ValidateFunction>();
const precompiled = new Map<string, () => ValidateFunction>();
const stats = { compiles: 0, hits: 0 };

/** Canonical schema text → a function making its validator, as `@capgate/schema/standalone` generates. */
export type PrecompiledValidators = Readonly<Record<string, () => ValidateFunction>>;

/**
 * Validators generated ahead of time (`@capgate/schema/standalone`) for schemas known at
 * build time: each under the canonical text of its schema (`stableStringify`), made on the
 * first lookup of that schema instead of compiling it. A schema whose text differs in any
 * way (another version of a package) is simply compiled. The first entry for a text wins.
 */
export function addPrecompiledValidators(validators: PrecompiledValidators): void {
  for (const [canonical, make] of Object.entries(validators)) {
    if (!precompiled.has(canonical)) precompiled.set(canonical, make);
  }
}

/**
 * The compiled validator for a schema. Validators are cached by the canonical text of the
 * schema's content, so a schema is compiled once per process however many copies of
 * it arrive (MCP servers resend theirs on every list); a precompiled one is used as is.
 */
export function compiledValidator(schema: JsonSchema | object): ValidateFunction {
  const known = byIdentity.get(schema);
  if (known) {
    stats.hits++;
    return known;
  }
  // Keyed by the exact canonical text: a hash collision must never hand out another schema's validator.
  const hash = stableStringify(schema);
  let fn = byHash.get(hash);
  if (fn) {
    stats.hits++;
    // Least recently used goes first: move a hit to the back of the eviction order.
    byHash.delete(hash);
    byHash.set(hash, fn);
  } else {
    const make = precompiled.get(hash);
    if (make) {
      fn = make();
    } else {
      fn = compileOne(schema as JsonSchema);
      stats.compiles++;
    }
    if (byHash.size >= MAX_CACHED) {
      const oldest = byHash.keys().next().value;
      if (oldest !== undefined) byHash.delete(oldest);
    }
    byHash.set(hash, fn);
  }
  byIdentity.set(schema, fn);
  return fn;
}

function compileOne(schema: JsonSchema, firstErrorOnly = false): ValidateFunction {
  const engine = engineFor(schema, firstErrorOnly);
  try {
    return engine.compile(rooted(schema));
  } catch (error) {
    if (error instanceof Error) error.message = error.message.replace(` from id ${ANONYMOUS_BASE}`, "");
    throw error;
  }
}

/** How many schemas were compiled (a precompiled one is not) and how many lookups hit the cache, since the process started. */
export function validatorCacheStats(): { compiles: number; hits: number; size: number } {
  return { compiles: stats.compiles, hits: stats.hits, size: byHash.size };
}

/** Validate a value against a JSON Schema: no coercion, no defaults injected. */
export function validate(schema: JsonSchema | object, value: unknown): ValidationResult {
  let fn: ValidateFunction;
  try {
    fn = holdsMoreValuesThan(value, ALL_ERRORS_MAX_VALUES)
      ? firstErrorValidator(schema)
      : compiledValidator(schema);
  } catch (error) {
    return {
      ok: false,
      errors: [{ property: "", message: `the schema itself is invalid: ${(error as Error).message}` }],
    };
  }
  let valid: boolean;
  try {
    valid = fn(value) as boolean;
  } catch (error) {
    // A schema whose references lead back to the same value without descending into it
    // (`$ref` loops beside other keywords compile) recurses until the stack runs out.
    if (!(error instanceof RangeError)) throw error;
    return {
      ok: false,
      errors: [
        {
          property: "",
          message:
            "the schema itself is invalid: its references loop back to the same value without end, so no value can be checked against it",
        },
      ],
    };
  }
  if (valid) return { ok: true };
  return { ok: false, errors: describeErrors(fn.errors ?? []) };
}

/** `a/b/0` → `a.b[0]` */
export function pointerToPath(pointer: string): string {
  if (pointer === "") return "";
  let out = "";
  for (const raw of pointer.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else out += out === "" ? seg : `.${seg}`;
  }
  return out;
}

export function joinPath(base: string, key: string): string {
  if (base === "") return key;
  return key.startsWith("[") ? `${base}${key}` : `${base}.${key}`;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function describeOne(err: ErrorObject): ValidationIssue {
  const at = pointerToPath(err.instancePath);
  const params = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case "required": {
      const missing = String(params.missingProperty);
      return { property: joinPath(at, missing), message: `missing required property \`${missing}\`` };
    }
    case "additionalProperties": {
      const extra = String(params.additionalProperty);
      const parent = (err.parentSchema ?? {}) as JsonSchema;
      const allowed = Object.keys(parent.properties ?? {});
      const guess = closestMatch(extra, allowed);
      const hint = guess ? `; did you mean \`${guess}\`?` : "";
      const list =
        allowed.length > 0 ? ` Allowed: ${allowed.join(", ")}.` : " No properties are allowed here.";
      return { property: joinPath(at, extra), message: `unexpected property \`${extra}\`${hint}${list}` };
    }
    case "type":
      return {
        property: at,
        message: `must be ${String(params.type)}, got ${typeOf(err.data)}`,
      };
    case "enum": {
      const allowed = (params.allowedValues as unknown[]) ?? [];
      return { property: at, message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}` };
    }
    case "const":
      return { property: at, message: `must be ${JSON.stringify(params.allowedValue)}` };
    default:
      return { property: at, message: err.message ?? `fails ${err.keyword}` };
  }
}

/**
 * Turn ajv's errors into one issue per problem, most actionable first (missing and
 * unexpected properties, then types, then the rest), without the noise that
 * oneOf/anyOf branches produce.
 */
export function describeErrors(errors: readonly ErrorObject[]): ValidationIssue[] {
  // An unexpected property first: its did-you-mean often explains the missing one too.
  const rank = (e: ErrorObject): number =>
    e.keyword === "additionalProperties"
      ? 0
      : e.keyword === "required"
        ? 1
        : e.keyword === "anyOf" || e.keyword === "oneOf"
          ? 3
          : 2;
  const combinatorPaths = new Set(
    errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf").map((e) => e.instancePath),
  );
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const err of [...errors].sort((a, b) => rank(a) - rank(b))) {
    // Branch errors under an anyOf/oneOf are summarised by the combinator's own error.
    if (err.keyword !== "anyOf" && err.keyword !== "oneOf" && /\/(anyOf|oneOf)\/\d+/.test(err.schemaPath)) {
      if (combinatorPaths.has(err.instancePath)) continue;
    }
    const issue =
      err.keyword === "anyOf" || err.keyword === "oneOf"
        ? { property: pointerToPath(err.instancePath), message: describeCombinator(err) }
        : describeOne(err);
    const key = `${issue.property}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}

function describeCombinator(err: ErrorObject): string {
  const branches = (err.schema as JsonSchema[] | undefined) ?? [];
  const kinds = branches.map((b) => {
    if (Array.isArray(b.type)) return b.type.join(" | ");
    if (b.type === "array" && b.items && !Array.isArray(b.items) && typeof b.items.type === "string")
      return `${b.items.type}[]`;
    return typeof b.type === "string" ? b.type : "a matching value";
  });
  return kinds.length > 0 ? `must be one of: ${kinds.join(", ")}` : "matches none of the allowed shapes";
}

/** End a message with one full stop. */
export function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * One message for a failed validation, the same wherever it is shown (the parser, the
 * executor, the HTTP gateway): "`path` first problem. Also: `p2` …; `p3` …." — paths
 * joined under `under` (e.g. "arguments"), an empty path shown as `root` (or left out).
 */
export function describeIssues(
  issues: readonly ValidationIssue[],
  options: { under?: string; root?: string } = {},
): { property: string; text: string } {
  const name = (path: string) =>
    path === "" ? options.under || options.root || "" : joinPath(options.under ?? "", path);
  const [first, ...rest] = issues;
  const property = name(first?.property ?? "");
  const more =
    rest.length > 0
      ? ` Also: ${rest
          .slice(0, 3)
          .map((e) => `\`${name(e.property)}\` ${e.message.replace(/\.$/, "")}`)
          .join("; ")}.`
      : "";
  const head = property ? `\`${property}\` ` : "";
  return { property, text: `${head}${sentence(first?.message ?? "is invalid")}${more}` };
}
