import { describe, expect, it } from "vitest";
import * as tools from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/tools public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(tools).sort()).toEqual([
      "BACKGROUND_PROCESSES_KEY",
      "BROWSER_PANEL_HINT",
      "BUILTIN_SHELL_RULES",
      "BackgroundProcesses",
      "CapabilitySet",
      "DEFAULT_KILL_GRACE_MS",
      "DEFAULT_LIMITS",
      "HeadTailCapture",
      "InvalidArgumentsError",
      "MAX_COMPONENT_BYTES",
      "MAX_PATH_BYTES",
      "MAX_SHELL_COMMAND_CHARS",
      "PolicyDeniedError",
      "UnknownToolError",
      "assertShellAllowed",
      "backgroundProcesses",
      "checkShellCommand",
      "checkUrl",
      "classifyAddress",
      "createHostResources",
      "createShellPolicy",
      "defineCapability",
      "describeExit",
      "executeTool",
      "guardedFetch",
      "isInside",
      "isRejection",
      "isUnknownToolError",
      "parseAllowHost",
      "realWorkspace",
      "resolveInWorkspace",
      "runProcess",
      "runShell",
      "shellCommandPolicy",
      "shellPolicyCheck",
      "shellQuote",
      "tailLines",
      "toWorkspaceRelative",
      "truncateBytes",
      "truncateMiddle",
      "truncationMarker",
      "urlPolicy",
      "workspacePathPolicy",
    ]);
  });
});
