import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/loop public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "ApprovalUnansweredError",
      "EventEmitterForRun",
      "FileRunStore",
      "MAX_CALL_DEPTH",
      "MemoryApprovalRegistry",
      "MemoryStore",
      "Session",
      "approvingMcpCaller",
      "asDecision",
      "createChat",
      "createToolCallService",
      "decodeEvent",
      "decodeJson",
      "encodeEvent",
      "encodeJson",
      "escapeText",
      "eventAfterEnd",
      "exposedSurface",
      "exposedToolName",
      "findUnstorableText",
      "isValidRunId",
      "newMemoryEntry",
      "newRunId",
      "readTraceFile",
      "refusalMessage",
      "runGoal",
      "runVerify",
      "summarise",
      "systemPrompt",
      "unescapeText",
    ]);
  });
});
