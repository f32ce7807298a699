import type { JsonSchema } from "./json-schema.js";
import { lineColumn, readJsonValue, StrictJsonError } from "./strict-json.js";
import { closestMatch } from "./suggest.js";
import { sharedTopLevelToolSchemas, type TopLevelToolName } from "./top-level.js";
import { describeIssues, joinPath, validate } from "./validate.js";

export type ParseErrorCode =
  | "invalid_json"
  | "trailing_text"
  | "multiple_actions"
  | "not_an_object"
  | "duplicate_key"
  | "forbidden_key"
  | "unknown_tool"
  | "invalid_arguments"
  | "too_large"
  | "too_deep";

/** Every code `parseToolAction` can return, for docs and exhaustive tests. */
export const PARSE_ERROR_CODES: readonly ParseErrorCode[] = [
  "invalid_json",
  "trailing_text",
  "multiple_actions",
  "not_an_object",
  "duplicate_key",
  "forbidden_key",
  "unknown_tool",
  "invalid_arguments",
  "too_large",
  "too_deep",
];

export interface ToolAction<Name extends string = string> {
  name: Name;
  arguments: Record<string, unknown>;
}

export interface ParseError {
  code: ParseErrorCode;
  message: string;
  property?: string;
}

export type ParseResult<Name extends string = string> =
  | { ok: true; action: ToolAction<Name> }
  | { ok: false; error: ParseError };

/** Largest model output accepted, in bytes of UTF-8. */
export const MAX_ACTION_BYTES = 1024 * 1024;
/** Deepest nesting of objects and arrays accepted, counting the action object itself. */
export const MAX_ACTION_DEPTH = 64;

const FORMAT_HINT = 'Reply with exactly one JSON object: {"name": "<tool>", "arguments": {…}}.';

const FENCE = /^```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

function err(code: ParseErrorCode, message: string, property?: string): { ok: false; error: ParseError } {
  return { ok: false, error: property === undefined ? { code, message } : { code, message, property } };
}

function utf8Length(text: string): number {
  // Cheap upper bound first: a UTF-16 unit is at most 3 UTF-8 bytes.
  if (text.length * 3 <= MAX_ACTION_BYTES) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Parse one model turn into an action, strictly: exactly one JSON object
 * `{"name", "arguments"}` (optionally inside one ```json fence), no duplicate or
 * prototype keys at any depth, a name from `schemas`, and arguments that satisfy that
 * tool's schema. Errors name the property and say what to send instead.
 */
export function parseToolAction<Name extends string = TopLevelToolName>(
  text: string,
  schemas: Record<Name, JsonSchema | object> = sharedTopLevelToolSchemas() as Record<Name, JsonSchema>,
): ParseResult<Name> {
  if (typeof text !== "string")
    return err("invalid_json", `Expected text, got ${typeof text}. ${FORMAT_HINT}`);
  if (utf8Length(text) > MAX_ACTION_BYTES) {
    return err(
      "too_large",
      `The reply is larger than ${MAX_ACTION_BYTES} bytes. Send one small action; put large content in a file with fs.write in smaller pieces.`,
    );
  }
  let body = text.trim();
  if (body === "") return err("invalid_json", `The reply is empty. ${FORMAT_HINT}`);
  const fenced = FENCE.exec(body);
  if (fenced) body = (fenced[1] ?? "").trim();

  const first = body[0];
  if (first !== "{" && first !== "[" && first !== '"' && !/[-0-9tfn]/.test(first ?? "")) {
    // Prose. If an object follows the prose, the problem is the prose.
    const brace = body.indexOf("{");
    if (brace > 0) {
      try {
        readJsonValue(body, brace, MAX_ACTION_DEPTH);
        return err(
          "trailing_text",
          `There is text before the JSON object. ${FORMAT_HINT} Put nothing before or after it.`,
        );
      } catch {
        // fall through to invalid_json
      }
    }
    return err("invalid_json", `The reply is not JSON. ${FORMAT_HINT}`);
  }

  let value: unknown;
  let end: number;
  try {
    ({ value, end } = readJsonValue(body, 0, MAX_ACTION_DEPTH));
  } catch (e) {
    return fromReadError(e, body);
  }

  const rest = body.slice(end).trim();
  if (rest !== "") {
    if (rest.startsWith("{") || rest.startsWith("```")) {
      let another = rest.startsWith("{");
      if (!another) another = FENCE.test(rest);
      if (another) {
        return err(
          "multiple_actions",
          "The reply contains more than one action. Send exactly one action per turn; you will see its result before the next.",
        );
      }
    }
    return err(
      "trailing_text",
      `There is text after the JSON object. ${FORMAT_HINT} Put nothing before or after it.`,
    );
  }

  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    const extra = Array.isArray(value) ? " Send one action at a time, not a list." : "";
    return err("not_an_object", `The reply is ${kind}, not an object.${extra} ${FORMAT_HINT}`);
  }
  return checkEnvelope(value as Record<string, unknown>, schemas);
}

function fromReadError(e: unknown, body: string): { ok: false; error: ParseError } {
  if (!(e instanceof StrictJsonError)) throw e;
  const { line, column } = lineColumn(body, e.offset);
  const where = `line ${line}, column ${column}`;
  switch (e.code) {
    case "duplicate_key":
      return err(
        "duplicate_key",
        `The property \`${e.path}\` appears twice (${where}). Send each property once.`,
        e.path,
      );
    case "forbidden_key":
      return err(
        "forbidden_key",
        `The key at \`${e.path}\` is not allowed (${where}): __proto__, constructor and prototype are never accepted as keys.`,
        e.path,
      );
    case "too_deep":
      return err(
        "too_deep",
        `The JSON nests deeper than ${MAX_ACTION_DEPTH} levels (${where}). Flatten the arguments.`,
      );
    default:
      return err("invalid_json", `Invalid JSON at ${where}: ${e.message}. ${FORMAT_HINT}`);
  }
}

function checkEnvelope<Name extends string>(
  obj: Record<string, unknown>,
  schemas: Record<Name, JsonSchema | object>,
): ParseResult<Name> {
  const allowed = Object.keys(schemas) as Name[];
  const name = obj.name;
  if (typeof name !== "string") {
    return err(
      "unknown_tool",
      name === undefined
        ? `The action has no \`name\`. ${FORMAT_HINT} Allowed names: ${allowed.join(", ")}.`
        : `\`name\` must be a string, one of: ${allowed.join(", ")}.`,
      "name",
    );
  }
  if (!Object.hasOwn(schemas, name)) {
    let hint = "";
    // The capability_call hint only where capability_call is offered: with tools called
    // directly by name (exposed mode) the closest offered name is the useful answer.
    const viaCall =
      Object.hasOwn(schemas, "capability_call") &&
      (/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/.test(name) || name.includes("/"));
    if (viaCall) {
      hint = ` \`${name}\` looks like a capability tool: call it through capability_call, e.g. {"name": "capability_call", "arguments": {"tool": "${name}", "arguments": {…}}}.`;
    } else {
      const guess = closestMatch(name, allowed);
      if (guess) hint = ` Did you mean \`${guess}\`?`;
    }
    return err(
      "unknown_tool",
      `Unknown tool \`${name}\`.${hint} Allowed names: ${allowed.join(", ")}.`,
      "name",
    );
  }
  const toolName = name as Name;
  const schema = schemas[toolName] as JsonSchema;

  for (const key of Object.keys(obj)) {
    if (key === "name" || key === "arguments") continue;
    const props = Object.keys(schema.properties ?? {});
    const misplaced = props.includes(key) || schema.additionalProperties === true;
    const hint = misplaced
      ? ` Put \`${key}\` inside \`arguments\`: {"name": "${toolName}", "arguments": {"${key}": …}}.`
      : " An action has only `name` and `arguments`.";
    return err("invalid_arguments", `Unexpected top-level property \`${key}\`.${hint}`, key);
  }

  let args = obj.arguments;
  if (args === undefined) args = {};
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return err(
      "invalid_arguments",
      `\`arguments\` must be an object, got ${args === null ? "null" : Array.isArray(args) ? "an array" : typeof args}.`,
      "arguments",
    );
  }
  let argObj = args as Record<string, unknown>;

  if (toolName === ("capability_call" as Name)) {
    const normalised = normaliseCapabilityCall(argObj);
    if (!normalised.ok) return normalised;
    argObj = normalised.args;
  }

  const result = validate(schema, argObj);
  if (!result.ok) {
    const { property, text } = describeIssues(result.errors, { under: "arguments" });
    return err("invalid_arguments", `Invalid arguments for ${toolName}: ${text}`, property);
  }
  return { ok: true, action: { name: toolName, arguments: argObj } };
}

/**
 * capability_call's inner arguments belong to the concrete tool. When the model put
 * them beside `tool` instead of inside `arguments`, they are the tool's arguments;
 * having both is ambiguous and rejected.
 */
function normaliseCapabilityCall(
  args: Record<string, unknown>,
): { ok: true; args: Record<string, unknown> } | { ok: false; error: ParseError } {
  const extras = Object.keys(args).filter((k) => k !== "tool" && k !== "arguments");
  if (extras.length === 0) return { ok: true, args };
  if (args.arguments !== undefined) {
    const key = extras[0] as string;
    return err(
      "invalid_arguments",
      `capability_call has both \`arguments\` and a stray \`${key}\`. Put every tool argument inside \`arguments\`.`,
      joinPath("arguments", key),
    );
  }
  const inner: Record<string, unknown> = {};
  for (const k of extras) inner[k] = args[k];
  return { ok: true, args: { tool: args.tool, arguments: inner } };
}
