import { describeIssues, type JsonSchema, validate } from "@capgate/schema";
import { HttpError } from "./http-errors.js";

/**
 * Check a JSON body (or query) against a closed schema; the first problem becomes a 400
 * naming the property (with a did-you-mean for a misspelled one), the others follow in
 * the message.
 */
export function checkInput<T>(schema: JsonSchema, value: unknown, what: string): T {
  if (value === undefined || value === null) {
    throw new HttpError(
      400,
      "invalid_request",
      `Send ${what} as a JSON object with \`Content-Type: application/json\`.`,
    );
  }
  const checked = validate(schema, value);
  if (!checked.ok) {
    const { property, text } = describeIssues(checked.errors);
    throw new HttpError(
      400,
      "invalid_request",
      `${what[0]!.toUpperCase()}${what.slice(1)} is not valid: ${text}`,
      property ? { property } : {},
    );
  }
  return value as T;
}

/** A non-negative integer from a query string or header, or a 400 naming it. */
export function integerParam(
  value: unknown,
  name: string,
  range: { min: number; max: number },
): number | undefined {
  if (value === undefined || value === "") return undefined;
  const text = Array.isArray(value) ? value[0] : value;
  if (
    typeof text !== "string" ||
    !/^\d{1,9}$/.test(text) ||
    Number(text) < range.min ||
    Number(text) > range.max
  ) {
    throw new HttpError(
      400,
      "invalid_request",
      `\`${name}\` must be an integer from ${range.min} to ${range.max}; got '${String(text).slice(0, 40)}'.`,
      { property: name },
    );
  }
  return Number(text);
}
