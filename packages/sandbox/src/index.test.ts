import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/sandbox public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "BACKGROUND_PROCESSES_KEY",
      "BackgroundProcesses",
      "HeadTailCapture",
      "SCRUBBED_ENV",
      "STATE_DIR_ENTRIES",
      "assertShellAllowed",
      "assertStateDirPlacement",
      "backgroundProcesses",
      "bashArgv",
      "closeEgressProxies",
      "containCommand",
      "currentOwner",
      "describeExit",
      "findSystemBinary",
      "ownerGone",
      "parseOwner",
      "policyFilesOfRunningSandboxes",
      "probeBwrap",
      "recoverInterruptedSandboxes",
      "runCommandLineSandboxed",
      "runProcess",
      "runSandboxed",
      "runShell",
      "sandboxCommand",
      "sandboxTarget",
      "scrubEnv",
      "shellCommandPolicy",
      "shellPolicyCheck",
      "stateDirFor",
      "stateDirPlacementProblem",
      "systemBash",
    ]);
  });
});
