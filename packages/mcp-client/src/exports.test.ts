import { describe, expect, it } from "vitest";
import * as root from "./index.js";
import * as stdio from "./stdio.js";

// Pins the public surface: adding or removing a name here is an API decision.
describe("public exports", () => {
  it("root entry", () => {
    expect(Object.keys(root).sort()).toEqual([
      "DEFAULT_BINARY_BYTES",
      "DEFAULT_MCP_TIMEOUT_MS",
      "DEFAULT_OUTPUT_BYTES",
      "GATE_TOOL_NAMES",
      "McpClientError",
      "McpConfigError",
      "McpOAuthProvider",
      "McpPool",
      "SERVER_NAME_PATTERN",
      "configHash",
      "createGateServer",
      "describeAuth",
      "elicitationFields",
      "elicitingApprover",
      "enabledServerNames",
      "executeCapabilityStep",
      "isHttpServer",
      "isStdioServer",
      "isUnknownToolErrorLike",
      "loginCommand",
      "memoryAuthStore",
      "normalizeToolList",
      "parseElicitationAnswer",
      "parseMcpServersConfig",
      "qualifyToolName",
      "renderCallToolResult",
      "routeMcpTool",
      "serverTimeoutMs",
      "stripControl",
      "toCapabilityManifest",
      "truncateUtf8",
    ]);
  });

  it("stdio entry", () => {
    expect(Object.keys(stdio).sort()).toEqual([
      "DEFAULT_MAX_MESSAGE_BYTES",
      "INHERITED_ENV_VARS",
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
