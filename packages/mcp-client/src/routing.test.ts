import { CapgateError } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { routeMcpTool } from "./routing.js";

const servers = {
  github: { command: "gh-mcp" },
  off: { command: "x", enabled: false },
  everything: { url: "http://127.0.0.1:1/mcp" },
};

function routingError(name: string): CapgateError {
  try {
    routeMcpTool(name, servers);
  } catch (error) {
    if (CapgateError.isInstance(error)) return error;
  }
  throw new Error("expected a routing error");
}

describe("routeMcpTool", () => {
  it("selects the named server for <server>/<tool>", () => {
    expect(routeMcpTool("everything/echo", servers)).toEqual({
      server: "everything",
      tool: "echo",
      explicit: true,
    });
  });

  it("splits on the first slash, so tool names may contain slashes", () => {
    expect(routeMcpTool("github/repos/list", servers)).toEqual({
      server: "github",
      tool: "repos/list",
      explicit: true,
    });
  });

  it("sends a bare name to the first enabled server", () => {
    expect(routeMcpTool("create_issue", servers)).toEqual({
      server: "github",
      tool: "create_issue",
      explicit: false,
    });
    expect(routeMcpTool("x", { off: { command: "x", enabled: false }, b: { command: "y" } })?.server).toBe(
      "b",
    );
  });

  it("answers none (undefined) without enabled servers", () => {
    expect(routeMcpTool("fs.read", {})).toBeUndefined();
    expect(routeMcpTool("a/b", undefined)).toBeUndefined();
    expect(routeMcpTool("x", { off: { command: "x", enabled: false } })).toBeUndefined();
  });

  it("names the configured servers when the prefix is unknown, with a suggestion", () => {
    const e = routingError("gihub/create_issue");
    expect(e.code).toBe("unknown_tool");
    expect(e.message).toContain("No MCP server named 'gihub'");
    expect(e.message).toContain("did you mean 'github/create_issue'?");
    expect(e.message).toContain("configured MCP servers: github, everything");
  });

  it("refuses disabled servers, empty server parts and missing tool names", () => {
    expect(routingError("off/x").message).toContain("MCP server 'off' is disabled");
    expect(routingError("/x").message).toContain("empty server part");
    expect(routingError("github/").message).toContain("Tool name is missing after 'github/'");
  });
});
