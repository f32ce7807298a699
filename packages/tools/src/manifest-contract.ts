import { type JsonSchema, signatureFromSchema, TOOL_RISKS, type ToolRisk, validate } from "@capgate/schema";
import type { ManifestLike } from "./define.js";

export interface ManifestContractOptions {
  /** Tool name → [exact signature, risk], in manifest order — the contract the manifest must keep. */
  expected?: Record<string, [string, ToolRisk]>;
  /** `<tool>.<property>` of required strings that may be empty (e.g. `fs.write.content`). */
  mayBeEmpty?: readonly string[];
  /** Profile names profileFit may use (default: the five built-in profiles). */
  profiles?: readonly string[];
  /** Expected manifest version (default "0.1.0"; pass undefined-free value to check yours). */
  version?: string;
}

const BUILTIN_PROFILES = ["Orchestrator", "Coder", "Researcher", "ComputerOperator", "Verifier"];

/**
 * The quality bar of a capgate manifest, beyond what `validateManifest` requires: the
 * promised signatures and risks, short descriptions (one to three sentences per tool),
 * every property described and bounded, closed schemas that compile. Returns the problems
 * (empty when the manifest keeps its contract) so any test framework can assert on it.
 */
export function manifestContractProblems(m: ManifestLike, options: ManifestContractOptions = {}): string[] {
  const problems: string[] = [];
  const fail = (where: string, what: string) => problems.push(`${where}: ${what}`);
  const mayBeEmpty = new Set(options.mayBeEmpty ?? []);
  const profiles = options.profiles ?? BUILTIN_PROFILES;

  if (options.expected) {
    const names = m.tools.map((t) => t.name);
    const wanted = Object.keys(options.expected);
    if (names.join(",") !== wanted.join(","))
      fail(m.name, `tools are [${names.join(", ")}], expected [${wanted.join(", ")}]`);
    for (const t of m.tools) {
      const entry = options.expected[t.name];
      if (!entry) continue;
      const [signature, risk] = entry;
      const actual = signatureFromSchema(t.name, t.inputSchema as JsonSchema);
      if (actual !== signature) fail(t.name, `signature is ${actual}, expected ${signature}`);
      if (t.risk !== risk) fail(t.name, `risk is ${t.risk ?? "(none)"}, expected ${risk}`);
    }
  }
  if (options.version !== undefined && m.version !== options.version)
    fail(m.name, `version ${m.version}, expected ${options.version}`);
  if (m.manifestFormat !== 1) fail(m.name, "manifestFormat must be 1");
  if (!/^[a-z][a-z0-9_]*$/.test(m.name)) fail(m.name, "name must match ^[a-z][a-z0-9_]*$");
  if (m.profileFit.length === 0) fail(m.name, "profileFit is empty");
  for (const p of m.profileFit)
    if (!profiles.includes(p)) fail(m.name, `profileFit names unknown profile ${p}`);
  if (m.description.length <= 40 || m.description.length > 300)
    fail(m.name, "description should be 41–300 characters");

  for (const t of m.tools) {
    if (!t.name.startsWith(`${m.name}.`)) fail(t.name, `is not prefixed with ${m.name}.`);
    if (!t.risk || !TOOL_RISKS.includes(t.risk)) fail(t.name, "needs a risk: read, write, exec or network");
    if (t.description.length <= 30 || t.description.length > 360)
      fail(t.name, "description should be 31–360 characters");
    const sentences = t.description.split(/[.!?](?:\s|$)/).filter((s) => s.trim()).length;
    if (sentences > 3) fail(t.name, `description has ${sentences} sentences (at most 3)`);

    const schema = t.inputSchema as JsonSchema;
    if (schema.type !== "object") fail(t.name, "inputSchema must be an object schema");
    if (schema.additionalProperties !== false)
      fail(t.name, "inputSchema must be closed (additionalProperties: false)");
    const required = new Set(schema.required ?? []);
    for (const [key, prop] of Object.entries(schema.properties ?? {})) {
      const at = `${t.name}.${key}`;
      if (!(typeof prop.description === "string" && prop.description.length > 5))
        fail(at, "needs a description");
      if (prop.type === "integer" && (typeof prop.minimum !== "number" || typeof prop.maximum !== "number"))
        fail(at, "integers need a minimum and a maximum");
      if (prop.type === "string" && !prop.enum && typeof prop.maxLength !== "number")
        fail(at, "strings need a maxLength");
      if (
        prop.type === "string" &&
        !prop.enum &&
        required.has(key) &&
        !mayBeEmpty.has(at) &&
        !((prop.minLength ?? 0) >= 1)
      )
        fail(at, "a required string needs minLength ≥ 1");
      if (prop.type === "array" && typeof prop.maxItems !== "number") fail(at, "arrays need a maxItems");
    }
    // An empty object passes or fails on `required` only — never "the schema itself is invalid".
    const empty = validate(schema, {});
    if (!empty.ok) {
      for (const e of empty.errors)
        if (!/^missing required/.test(e.message)) fail(t.name, `validating {} gave: ${e.message}`);
    }
    if (validate(schema, { zz_unexpected: 1 }).ok) fail(t.name, "accepts an unexpected property");
  }
  return problems;
}

/**
 * Check one example call against a tool's schema: undefined when it behaves as expected
 * (valid → accepted; with `property` → rejected naming that property), else the problem.
 */
export function callContractProblem(
  m: ManifestLike,
  tool: string,
  args: unknown,
  property?: string,
): string | undefined {
  const found = m.tools.find((t) => t.name === tool);
  if (!found) return `no tool ${tool}`;
  const result = validate(found.inputSchema as JsonSchema, args);
  if (property === undefined) {
    return result.ok
      ? undefined
      : `${tool} rejected ${JSON.stringify(args)}: ${result.errors.map((e) => `${e.property} ${e.message}`).join("; ")}`;
  }
  if (result.ok) return `${tool} accepted ${JSON.stringify(args)}`;
  const named = result.errors.map((e) => e.property);
  return named.includes(property)
    ? undefined
    : `${tool} rejected ${JSON.stringify(args)} naming [${named.join(", ")}], not ${property}`;
}
