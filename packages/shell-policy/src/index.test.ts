import { describe, expect, it } from "vitest";
import * as claudeCode from "./claude-code.js";
import * as shellPolicy from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/shell-policy public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(shellPolicy).sort()).toEqual([
      "BROWSER_PANEL_HINT",
      "BUILTIN_SHELL_RULES",
      "MAX_SHELL_COMMAND_CHARS",
      "ShellRulesError",
      "checkShellCommand",
      "createShellPolicy",
      "shellQuote",
      "splitCommandLine",
    ]);
  });

  it("exports exactly these runtime names from ./claude-code", () => {
    expect(Object.keys(claudeCode).sort()).toEqual([
      "decideHook",
      "decisionJson",
      "hookConfigPath",
      "runClaudeCodeHook",
    ]);
  });
});
