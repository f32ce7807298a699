import * as incubating from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import * as semconv from "./semconv.js";

// The names are copied (the GenAI conventions are "development" status); this pins each to
// the definition in @opentelemetry/semantic-conventions, so a rename there shows here.
describe("semantic-convention names", () => {
  it("match the package's definitions", () => {
    const pairs: Array<[string, string]> = [
      [semconv.GEN_AI_OPERATION_NAME, incubating.ATTR_GEN_AI_OPERATION_NAME],
      [semconv.GEN_AI_PROVIDER_NAME, incubating.ATTR_GEN_AI_PROVIDER_NAME],
      [semconv.GEN_AI_REQUEST_MODEL, incubating.ATTR_GEN_AI_REQUEST_MODEL],
      [semconv.GEN_AI_USAGE_INPUT_TOKENS, incubating.ATTR_GEN_AI_USAGE_INPUT_TOKENS],
      [semconv.GEN_AI_USAGE_OUTPUT_TOKENS, incubating.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS],
      [semconv.GEN_AI_AGENT_NAME, incubating.ATTR_GEN_AI_AGENT_NAME],
      [semconv.GEN_AI_CONVERSATION_ID, incubating.ATTR_GEN_AI_CONVERSATION_ID],
      [semconv.GEN_AI_OUTPUT_MESSAGES, incubating.ATTR_GEN_AI_OUTPUT_MESSAGES],
      [semconv.GEN_AI_TOOL_NAME, incubating.ATTR_GEN_AI_TOOL_NAME],
      [semconv.GEN_AI_TOOL_TYPE, incubating.ATTR_GEN_AI_TOOL_TYPE],
      [semconv.GEN_AI_TOOL_CALL_ID, incubating.ATTR_GEN_AI_TOOL_CALL_ID],
      [semconv.GEN_AI_TOOL_CALL_ARGUMENTS, incubating.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS],
      [semconv.GEN_AI_TOOL_CALL_RESULT, incubating.ATTR_GEN_AI_TOOL_CALL_RESULT],
      [semconv.MCP_METHOD_NAME, incubating.ATTR_MCP_METHOD_NAME],
      [semconv.ERROR_TYPE, incubating.ATTR_ERROR_TYPE],
      [semconv.OPERATION.chat, incubating.GEN_AI_OPERATION_NAME_VALUE_CHAT],
      [semconv.OPERATION.executeTool, incubating.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL],
      [semconv.OPERATION.invokeAgent, incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT],
    ];
    for (const [ours, theirs] of pairs) expect(ours).toBe(theirs);
  });
});
