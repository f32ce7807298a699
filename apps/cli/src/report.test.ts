import { describe, expect, it } from "vitest";
import { CliError, ExitCode } from "./errors.js";
import { describeError } from "./report.js";

describe("describeError", () => {
  it("maps rejections to 2 and failures (MCP faults included) to 1", () => {
    const err = (code: string, message = "m") => Object.assign(new Error(message), { code });
    expect(describeError(err("unknown_tool")).exitCode).toBe(ExitCode.rejected);
    expect(describeError(err("policy_denied")).exitCode).toBe(ExitCode.rejected);
    expect(describeError(err("invalid_arguments")).exitCode).toBe(ExitCode.rejected);
    expect(describeError(err("mcp_timeout")).exitCode).toBe(ExitCode.failure);
    expect(describeError(err("mcp_connect_failed")).exitCode).toBe(ExitCode.failure);
    expect(describeError(new Error("boom"))).toMatchObject({ code: "internal", exitCode: 1 });
    expect(describeError(new CliError("x", 2, "h"))).toMatchObject({ code: "usage", hint: "h", exitCode: 2 });
  });

  it("never tags a config problem with another problem's property", () => {
    const e = Object.assign(new Error("/p/capgate.config.json is invalid:\n  - a\n  - b"), {
      code: "invalid_config",
      property: "modle",
      problems: [
        { property: "modle", message: "unexpected property `modle`; did you mean `model`?" },
        { property: "approval", message: 'must be one of "never", "on-risk", "always"' },
      ],
    });
    const r = describeError(e);
    expect(r.property).toBeUndefined();
    expect(r.message).toBe(
      '/p/capgate.config.json is invalid — modle: unexpected property `modle`; did you mean `model`?; approval: must be one of "never", "on-risk", "always"',
    );
    expect(r.problems?.map((p) => p.property)).toEqual(["modle", "approval"]);
  });

  it("replaces the model's advice with the CLI's", () => {
    const e = Object.assign(new Error("Unknown tool 'zz'. Use capability_search to find the right tool."), {
      code: "unknown_tool",
    });
    expect(describeError(e)).toMatchObject({
      message: "Unknown tool 'zz'.",
      hint: "`capgate search <words>` finds the right tool",
    });
  });

  it("says a config file is not JSON in words, without a (root) tag", () => {
    const e = Object.assign(new Error("/p/capgate.config.json is invalid:\n  - (root): not valid JSON"), {
      code: "invalid_config",
      problems: [{ property: "", message: "not valid JSON at line 1, column 15: unexpected '}'" }],
    });
    expect(describeError(e)).toMatchObject({
      message: "/p/capgate.config.json is not valid JSON at line 1, column 15: unexpected '}'",
      exitCode: 1,
    });
  });
});
