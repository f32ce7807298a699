import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// The public surface, pinned: a change here is an API decision and shows up in review.
describe("@capgate/host exports", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DEMO_GOAL",
      "DEMO_REPLIES",
      "GateSessions",
      "PLAIN_TEXT",
      "adHocMcpTarget",
      "bearerToken",
      "checkHostAndOrigin",
      "checkToken",
      "configuredMcpServer",
      "configuredMcpTarget",
      "createDemo",
      "databaseSetting",
      "describeAuthStatus",
      "describeCapability",
      "describeCapabilitySource",
      "describeCatalog",
      "describeEvent",
      "describeMcpServerStatus",
      "describeQueueRunEvent",
      "generateToken",
      "mcpServerStatus",
      "openHost",
      "originPolicy",
      "ownerOf",
      "parseStartRunRequest",
      "progressText",
      "runDemo",
      "serveGateOnStdio",
      "startQueueWorker",
      "terminalSafe",
      "tokenMatcher",
    ]);
  });
});
