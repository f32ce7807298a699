import { holdsMoreValuesThan, parseJsonStrict } from "@capgate/schema";
import type { ToolResult } from "@capgate/tools";

/** What a failed call looks like inside the script: an Error with these fields. */
export interface CallErrorInfo {
  message: string;
  code: string;
  tool: string;
  property?: string;
  /** For `tool_failed`: what the tool returned (summary and data). */
  result?: unknown;
}

/** Deepest nesting of arrays and objects in a JSON text, read without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 93 || c === 125) depth--;
  }
  return max;
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** A value bound for the script, as reply text; an error reply when it is too big or too deep to cross. */
export function valueReply(
  tool: string,
  value: unknown,
  limits: { valueBytes: number; valueDepth: number },
): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return errorReply({
      tool,
      code: "not_json",
      message: `The result of ${tool} could not be passed to the script: ${(error as Error).message}.`,
    });
  }
  if (text === undefined) return '{"ok":true}';
  const bytes = utf8Bytes(text);
  if (bytes > limits.valueBytes)
    return errorReply({
      tool,
      code: "value_too_large",
      message: `The result of ${tool} is ${bytes} bytes, over the ${limits.valueBytes}-byte limit for a value passed to a script; ask for less (a page, a path, a pattern).`,
    });
  if (jsonDepth(text) > limits.valueDepth)
    return errorReply({
      tool,
      code: "value_too_deep",
      message: `The result of ${tool} nests deeper than ${limits.valueDepth} levels and cannot be passed to the script.`,
    });
  return `{"ok":true,"value":${text}}`;
}

export function errorReply(info: CallErrorInfo): string {
  return JSON.stringify({ ok: false, error: info });
}

/** What a successful call gives the script: the model-facing summary and the data for programs. */
export function resultValue(result: ToolResult): Record<string, unknown> {
  return {
    summary: result.summary,
    ...(result.data !== undefined ? { data: result.data } : {}),
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
  };
}

export type ParsedArgs =
  | { ok: true; value: Record<string, unknown>; bytes: number }
  | { ok: false; info: CallErrorInfo };

/**
 * A call's arguments as the script sent them (JSON text made inside the engine), read
 * with the same strict reader as the model's actions: duplicate keys, `__proto__`,
 * `constructor`, `prototype` and nesting past the limit are refused, naming where.
 */
export function parseArguments(
  tool: string,
  text: string,
  limits: { valueBytes: number; valueDepth: number; valueCount: number },
): ParsedArgs {
  const bytes = utf8Bytes(text);
  if (bytes > limits.valueBytes)
    return {
      ok: false,
      info: {
        tool,
        code: "too_large",
        property: "arguments",
        message: `The arguments of ${tool} are ${bytes} bytes, over the ${limits.valueBytes}-byte limit.`,
      },
    };
  const parsed = parseJsonStrict(text, { maxDepth: limits.valueDepth });
  if (!parsed.ok) {
    const property = parsed.path ? `arguments.${parsed.path}` : "arguments";
    return {
      ok: false,
      info: {
        tool,
        code: parsed.code === "too_deep" ? "too_deep" : "invalid_arguments",
        property,
        message: `The arguments of ${tool} were refused at \`${property}\`: ${parsed.message}.`,
      },
    };
  }
  const value = parsed.value;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return {
      ok: false,
      info: {
        tool,
        code: "invalid_arguments",
        property: "arguments",
        message: `Arguments for ${tool} must be an object, e.g. { path: "notes.txt" }.`,
      },
    };
  if (holdsMoreValuesThan(value, limits.valueCount))
    return {
      ok: false,
      info: {
        tool,
        code: "too_large",
        property: "arguments",
        message: `The arguments of ${tool} hold more than ${limits.valueCount} values (array items and object members together); pass fewer at once, e.g. in several calls.`,
      },
    };
  return { ok: true, value: value as Record<string, unknown>, bytes };
}
