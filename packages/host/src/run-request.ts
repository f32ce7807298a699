import { CapgateError, describeIssues, type JsonSchema, validate } from "@capgate/schema";
import { APPROVAL_MODES } from "@capgate/tools";
import type { StartRunRequest } from "./run-launcher.js";

/** What a request to start a goal run may hold: closed, with limits on every string. */
export const START_RUN_REQUEST_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["goal"],
  properties: {
    goal: { type: "string", minLength: 1, maxLength: 20_000 },
    profile: { type: "string", minLength: 1, maxLength: 100 },
    model: { type: "string", minLength: 1, maxLength: 2000 },
    maxSteps: { type: "integer", minimum: 1, maximum: 10_000 },
    approval: { enum: [...APPROVAL_MODES] },
    mcp: { type: "boolean" },
  },
};

/**
 * A start-run request from a client (a parsed JSON body), checked against the closed
 * schema: the first problem is an `invalid_request` naming the property (with a
 * did-you-mean for a misspelled one), the others follow in the message.
 */
export function parseStartRunRequest(value: unknown, what = "the run request"): StartRunRequest {
  if (value === undefined || value === null) {
    throw new CapgateError(
      "invalid_request",
      `Send ${what} as a JSON object with \`Content-Type: application/json\`.`,
    );
  }
  const checked = validate(START_RUN_REQUEST_SCHEMA, value);
  if (!checked.ok) {
    const { property, text } = describeIssues(checked.errors);
    throw new CapgateError(
      "invalid_request",
      `${what[0]!.toUpperCase()}${what.slice(1)} is not valid: ${text}`,
      property ? { property } : {},
    );
  }
  return value as StartRunRequest;
}
