import { describe, expect, it } from "vitest";
import * as root from "./index.js";
import * as stdio from "./stdio.js";

// Pins the public surface: adding or removing a name here is an API decision.
describe("public exports", () => {
  it("root entry", () => {
    expect(Object.keys(root).sort()).toEqual([
      "DEFAULT_OUTPUT_BYTES",
      "McpClientError",
      "McpConfigError",
      "McpOAuthProvider",
      "McpPool",
      "createGateServer",
      "describeAuth",
      "elicitationFields",
      "elicitingApprover",
      "executeCapabilityStep",
      "isHttpServer",
      "isStdioServer",
      "isUnknownToolErrorLike",
      "loginCommand",
      "memoryAuthStore",
      "normalizeToolList",
      "parseElicitationAnswer",
      "parseMcpServersConfig",
      "renderCallToolResult",
      "routeMcpTool",
      "serverTimeoutMs",
      "toCapabilityManifest",
      "truncateUtf8",
    ]);
  });

  it("stdio entry", () => {
    expect(Object.keys(stdio).sort()).toEqual([
      "StdioProcessTransport",
      "connectAdHoc",
      "createNodeMcpPool",
      "createStdioTransport",
      "fileAuthStore",
      "fileToolListCache",
      "loginMcpServer",
      "logoutMcpServer",
      "serveGateOverStdio",
      "serverEnv",
      "startLoopbackRedirect",
    ]);
  });
});
