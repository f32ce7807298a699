import {
  closestMatch,
  compiledValidator,
  type JsonSchema,
  MANIFEST_FORMAT,
  TOOL_RISKS,
} from "@capgate/schema";

export interface ManifestProblem {
  /** Where the problem is, e.g. `tools[2].inputSchema.additionalProperties`; "" for the manifest itself. */
  path: string;
  message: string;
}

export interface ValidateManifestOptions {
  /**
   * Compile each tool's input schema, so one that cannot compile is reported here (default
   * true). Only a caller whose manifests are fixed at build time and compiled by its own
   * tests turns this off, to spare the start of every process the compile of schemas it
   * may never validate against (the harness's built-in capabilities). A schema is still
   * compiled before its first call; every structural check runs either way.
   */
  compileSchemas?: boolean;
}

export interface ManifestValidation {
  ok: boolean;
  problems: ManifestProblem[];
}

export const CAPABILITY_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
export const TOOL_VERB_PATTERN = /^[a-z][a-z0-9_]*$/;
export const MAX_TOOL_NAME_LENGTH = 64;
/** Capability names in this namespace are built from MCP servers' tool lists, never registered by hand. */
export const MCP_NAMESPACE = "mcp:";

// The grammar from semver.org (2.0.0).
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

const MANIFEST_FIELDS = ["name", "version", "description", "tools", "profileFit", "manifestFormat"];
const TOOL_FIELDS = ["name", "description", "inputSchema", "risk"];

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function unknownFields(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  at: (key: string) => string,
  out: ManifestProblem[],
): void {
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    const guess = closestMatch(key, allowed);
    out.push({
      path: at(key),
      message: `unexpected field \`${key}\`${guess ? `; did you mean \`${guess}\`?` : ""} Allowed: ${allowed.join(", ")}.`,
    });
  }
}

function checkText(value: unknown, path: string, what: string, out: ManifestProblem[]): value is string {
  if (value === undefined) {
    out.push({ path, message: `missing required field \`${path.split(".").pop()}\` (${what})` });
    return false;
  }
  if (typeof value !== "string") {
    out.push({ path, message: `must be a string (${what}), got ${kindOf(value)}` });
    return false;
  }
  return true;
}

function checkSchema(schema: unknown, path: string, out: ManifestProblem[], compile: boolean): void {
  if (schema === undefined) {
    out.push({ path, message: "missing required field `inputSchema` (a closed JSON object schema)" });
    return;
  }
  if (!isPlainObject(schema)) {
    out.push({ path, message: `must be a JSON Schema object, got ${kindOf(schema)}` });
    return;
  }
  if (schema.type !== "object") {
    out.push({
      path: `${path}.type`,
      message: `a tool's arguments are an object: \`type\` must be "object", got ${show(schema.type)}`,
    });
  }
  if (schema.additionalProperties !== false) {
    out.push({
      path: `${path}.additionalProperties`,
      message: `the schema is open: set \`additionalProperties: false\` so an unexpected argument is rejected by name instead of silently ignored (got ${show(schema.additionalProperties)})`,
    });
  }
  const props = schema.properties;
  if (props !== undefined && !isPlainObject(props)) {
    out.push({ path: `${path}.properties`, message: `must be an object, got ${kindOf(props)}` });
  }
  if (Array.isArray(schema.required) && schema.additionalProperties === false) {
    const known = isPlainObject(props) ? props : {};
    schema.required.forEach((key, i) => {
      if (typeof key === "string" && !Object.hasOwn(known, key)) {
        out.push({
          path: `${path}.required[${i}]`,
          message: `\`${key}\` is required but not among \`properties\`, so no call could ever be valid`,
        });
      }
    });
  }
  if (!compile) return;
  try {
    compiledValidator(schema as JsonSchema);
  } catch (error) {
    out.push({ path, message: `the schema does not compile: ${(error as Error).message}` });
  }
}

function checkTool(
  tool: unknown,
  index: number,
  capability: string | undefined,
  seen: Map<string, number>,
  out: ManifestProblem[],
  compile: boolean,
): void {
  const at = `tools[${index}]`;
  if (!isPlainObject(tool)) {
    out.push({ path: at, message: `a tool must be an object, got ${kindOf(tool)}` });
    return;
  }
  unknownFields(tool, TOOL_FIELDS, (k) => `${at}.${k}`, out);
  const name = tool.name;
  if (checkText(name, `${at}.name`, "`<capability>.<verb>`", out)) {
    const dot = name.indexOf(".");
    const prefix = dot === -1 ? "" : name.slice(0, dot);
    const verb = dot === -1 ? "" : name.slice(dot + 1);
    if (dot === -1 || !TOOL_VERB_PATTERN.test(verb) || !CAPABILITY_NAME_PATTERN.test(prefix)) {
      out.push({
        path: `${at}.name`,
        message: `tool name ${show(name)} must be \`<capability>.<verb>\`, both parts matching ^[a-z][a-z0-9_]*$ (e.g. "fs.read")`,
      });
    } else if (capability !== undefined && prefix !== capability) {
      out.push({
        path: `${at}.name`,
        message: `tool name ${show(name)} must start with the capability name: "${capability}.${verb}"`,
      });
    }
    if (name.length > MAX_TOOL_NAME_LENGTH) {
      out.push({
        path: `${at}.name`,
        message: `tool name is ${name.length} characters; at most ${MAX_TOOL_NAME_LENGTH} are allowed`,
      });
    }
    const first = seen.get(name);
    if (first !== undefined) {
      out.push({ path: `${at}.name`, message: `duplicate tool name ${show(name)} (also tools[${first}])` });
    } else {
      seen.set(name, index);
    }
  }
  if (checkText(tool.description, `${at}.description`, "what the tool is for and when not to use it", out)) {
    if (tool.description.trim() === "") {
      out.push({
        path: `${at}.description`,
        message: "must not be empty: say what the tool does and when to use it",
      });
    }
  }
  checkSchema(tool.inputSchema, `${at}.inputSchema`, out, compile);
  if (tool.risk !== undefined && !(TOOL_RISKS as readonly unknown[]).includes(tool.risk)) {
    out.push({
      path: `${at}.risk`,
      message: `must be one of ${TOOL_RISKS.join(", ")}, got ${show(tool.risk)}`,
    });
  }
}

/**
 * Check a capability manifest and report every problem at once (not just the first), each
 * with the path of the value to fix. This is what `capgate capability lint` runs and what
 * `Registry.register` refuses on.
 */
export function validateManifest(
  manifest: unknown,
  options: ValidateManifestOptions = {},
): ManifestValidation {
  const compile = options.compileSchemas ?? true;
  const out: ManifestProblem[] = [];
  if (!isPlainObject(manifest)) {
    out.push({ path: "", message: `a capability manifest must be an object, got ${kindOf(manifest)}` });
    return { ok: false, problems: out };
  }
  unknownFields(manifest, MANIFEST_FIELDS, (k) => k, out);

  let capability: string | undefined;
  if (checkText(manifest.name, "name", "the capability name, e.g. `fs`", out)) {
    if (manifest.name.startsWith(MCP_NAMESPACE)) {
      out.push({
        path: "name",
        message: `the \`${MCP_NAMESPACE}\` namespace is reserved for configured MCP servers; pick a name matching ^[a-z][a-z0-9_]*$`,
      });
    } else if (!CAPABILITY_NAME_PATTERN.test(manifest.name)) {
      out.push({
        path: "name",
        message: `capability name ${show(manifest.name)} must match ^[a-z][a-z0-9_]*$ (lowercase letters, digits, _; starting with a letter)`,
      });
    } else {
      capability = manifest.name;
    }
  }

  if (checkText(manifest.version, "version", 'a semver version such as "1.0.0"', out)) {
    if (!SEMVER.test(manifest.version)) {
      out.push({
        path: "version",
        message: `${show(manifest.version)} is not a semver version such as "1.2.0"`,
      });
    }
  }

  if (checkText(manifest.description, "description", "what the capability is for", out)) {
    if (manifest.description.trim() === "") {
      out.push({ path: "description", message: "must not be empty: say what the capability is for" });
    }
  }

  const tools = manifest.tools;
  if (tools === undefined) {
    out.push({ path: "tools", message: "missing required field `tools` (a list of tool manifests)" });
  } else if (!Array.isArray(tools)) {
    out.push({ path: "tools", message: `must be an array of tool manifests, got ${kindOf(tools)}` });
  } else if (tools.length === 0) {
    out.push({ path: "tools", message: "a capability must have at least one tool" });
  } else {
    const seen = new Map<string, number>();
    tools.forEach((tool, i) => {
      checkTool(tool, i, capability, seen, out, compile);
    });
  }

  const fit = manifest.profileFit;
  if (fit === undefined) {
    out.push({
      path: "profileFit",
      message: "missing required field `profileFit` (profile names, may be empty)",
    });
  } else if (!Array.isArray(fit)) {
    out.push({ path: "profileFit", message: `must be an array of profile names, got ${kindOf(fit)}` });
  } else {
    fit.forEach((entry, i) => {
      if (typeof entry !== "string") {
        out.push({
          path: `profileFit[${i}]`,
          message: `must be a profile name (string), got ${kindOf(entry)}`,
        });
      }
    });
  }

  const format = manifest.manifestFormat;
  if (format !== undefined) {
    if (typeof format !== "number" || !Number.isInteger(format) || format < 1) {
      out.push({ path: "manifestFormat", message: `must be a positive integer, got ${show(format)}` });
    } else if (format > MANIFEST_FORMAT) {
      out.push({
        path: "manifestFormat",
        message: `format ${format} is newer than this registry understands (${MANIFEST_FORMAT}); upgrade @capgate/registry`,
      });
    }
  }

  return { ok: out.length === 0, problems: out };
}

/** One line per problem, for error messages and `capability lint`. */
export function formatProblems(problems: readonly ManifestProblem[]): string {
  return problems.map((p) => `- ${p.path === "" ? "(manifest)" : p.path}: ${p.message}`).join("\n");
}
