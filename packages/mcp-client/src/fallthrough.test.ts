import { CapgateError } from "@capgate/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServersMap } from "./config.js";
import { McpClientError } from "./errors.js";
import { executeCapabilityStep, isUnknownToolErrorLike } from "./fallthrough.js";
import type { McpPool } from "./pool.js";
import type { ToolResult } from "./render.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { everything, fixture } from "./test-support/fixtures.js";

// Shaped like @capgate/tools' errors (which this package must not import): the check is structural.
class UnknownTool extends CapgateError {
  constructor(
    readonly tool: string,
    readonly owner?: string,
  ) {
    super(
      "unknown_tool",
      owner
        ? `capability '${owner}' is not loaded; call capability_load {"name":"${owner}"}`
        : `Unknown tool '${tool}'; did you mean 'fs.read'?`,
      { property: "tool" },
    );
  }
}

let calls = 0;
const nativeOk = async (): Promise<ToolResult> => {
  calls++;
  return { success: true, summary: "native ran" };
};
const nativeUnknown = (tool: string, owner?: string) => async (): Promise<ToolResult> => {
  calls++;
  throw new UnknownTool(tool, owner);
};

let pool: McpPool;
beforeAll(() => {
  pool = createNodeMcpPool({ evil: fixture("hostile-server"), everything: everything() });
});
afterAll(async () => {
  await pool.close();
});

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("executeCapabilityStep", () => {
  it("returns native results without touching MCP", async () => {
    const out = await executeCapabilityStep({ tool: "fs.read" }, { native: nativeOk, mcp: pool });
    expect(out).toEqual({ via: "native", result: { success: true, summary: "native ran" } });
    expect(await pool.pidOf("evil")).toBeUndefined();
  });

  it("falls through to the named server on a native unknown-tool error", async () => {
    const out = await executeCapabilityStep(
      { tool: "everything/echo", arguments: { message: "via mcp" } },
      { native: nativeUnknown("everything/echo"), mcp: pool },
    );
    expect(out.via).toBe("mcp");
    expect(out.server).toBe("everything");
    expect(out.tool).toBe("echo");
    expect(out.result.summary).toContain("via mcp");
  }, 30_000);

  it("bare names: the first server's tool runs when it lists it", async () => {
    const p = createNodeMcpPool({ everything: everything(), evil: fixture("hostile-server") });
    try {
      const out = await executeCapabilityStep(
        { tool: "echo", arguments: { message: "bare" } },
        { native: nativeUnknown("echo"), mcp: p },
      );
      expect(out.via).toBe("mcp");
      expect(out.server).toBe("everything");
      expect(out.result.summary).toContain("bare");
    } finally {
      await p.close();
    }
  }, 30_000);

  it("bare names the first server does not list get the original native error", async () => {
    const error = await rejection(
      executeCapabilityStep({ tool: "fs.red" }, { native: nativeUnknown("fs.red"), mcp: pool }),
    );
    expect(error).toBeInstanceOf(UnknownTool);
    expect((error as Error).message).toContain("did you mean 'fs.read'");
  }, 30_000);

  it("a server tool named like a native one cannot shadow it: it is reachable only as <server>/<tool>", async () => {
    // fs.read is a native tool that is not loaded (owner set): no fallthrough to evil's fs.read.
    const error = await rejection(
      executeCapabilityStep({ tool: "fs.read" }, { native: nativeUnknown("fs.read", "fs"), mcp: pool }),
    );
    expect(error).toBeInstanceOf(UnknownTool);
    expect((error as Error).message).toContain("capability 'fs' is not loaded");
    const out = await executeCapabilityStep(
      { tool: "evil/fs.read" },
      { native: nativeUnknown("evil/fs.read"), mcp: pool },
    );
    expect(out.result.summary).toBe("HOSTILE fs.read ran");
    const slash = await executeCapabilityStep(
      { tool: "evil/other/thing" },
      { native: nativeUnknown("evil/other/thing"), mcp: pool },
    );
    expect(slash.result.summary).toBe("HOSTILE other/thing ran");
  }, 30_000);

  it("rethrows the original native error when no server is configured (MCP answers none)", async () => {
    const policies: Array<McpServersMap | undefined> = [
      undefined,
      {},
      { off: { command: "x", enabled: false } },
    ];
    for (const mcp of policies) {
      const error = await rejection(
        executeCapabilityStep({ tool: "fs.red" }, { native: nativeUnknown("fs.red"), mcp }),
      );
      expect(error).toBeInstanceOf(UnknownTool);
      expect((error as Error).message).toContain("fs.read");
      expect((error as Error).message).not.toMatch(/MCP/);
    }
  });

  it("never retries other native errors on MCP", async () => {
    const before = calls;
    const invalid = new CapgateError("invalid_arguments", "arguments.path is required", {
      property: "arguments.path",
    });
    const error = await rejection(
      executeCapabilityStep(
        { tool: "everything/echo" },
        {
          native: async () => {
            calls++;
            throw invalid;
          },
          mcp: pool,
        },
      ),
    );
    expect(error).toBe(invalid);
    expect(calls).toBe(before + 1);
    const plain = new Error("disk on fire");
    expect(
      await rejection(
        executeCapabilityStep({ tool: "x" }, { native: async () => Promise.reject(plain), mcp: pool }),
      ),
    ).toBe(plain);
  });

  it("names the configured servers for an unknown <server>/ prefix", async () => {
    const error = await rejection(
      executeCapabilityStep(
        { tool: "gihub/create_issue" },
        { native: nativeUnknown("gihub/create_issue"), mcp: pool },
      ),
    );
    expect(isUnknownToolErrorLike(error)).toBe(true);
    expect((error as Error).message).toContain("configured MCP servers: evil, everything");
  });

  it("asks for a pool when only a non-empty map is given", async () => {
    const error = await rejection(
      executeCapabilityStep({ tool: "a/b" }, { native: nativeUnknown("a/b"), mcp: { a: { command: "x" } } }),
    );
    expect(McpClientError.isInstance(error) && error.code).toBe("mcp_unavailable");
  });

  it("isUnknownToolErrorLike is structural", () => {
    expect(isUnknownToolErrorLike(new CapgateError("unknown_tool", "x"))).toBe(true);
    expect(isUnknownToolErrorLike(new CapgateError("invalid_arguments", "x"))).toBe(false);
    expect(isUnknownToolErrorLike({ code: "unknown_tool", message: "x" })).toBe(false);
    expect(isUnknownToolErrorLike(new Error("unknown_tool"))).toBe(false);
  });
});
