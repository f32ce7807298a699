import { describe, expect, it } from "vitest";
import { McpClientError } from "./errors.js";
import type { McpPoolEvent } from "./pool-types.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { fixture, isAlive, liveGroupMembers, processesWithArg, waitUntil } from "./test-support/fixtures.js";

async function caught(promise: Promise<unknown>): Promise<McpClientError> {
  try {
    await promise;
  } catch (error) {
    if (McpClientError.isInstance(error)) return error as McpClientError;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("a server that exits mid-call", () => {
  it("fails the pending call fast with an error naming the server, and the next call reconnects", async () => {
    const pool = createNodeMcpPool({ crashy: fixture("crash-server", { timeoutMs: 60_000 }) });
    try {
      const first = await pool.callTool("crashy", "echo", { text: "a" });
      const pid1 = await pool.pidOf("crashy");
      expect(first.summary).toBe(`echo:a pid:${pid1}`);

      const error = await caught(pool.callTool("crashy", "crash", {}));
      expect(error.code).toBe("mcp_closed");
      expect(error.server).toBe("crashy");
      expect(error.message).toContain("MCP server 'crashy' exited with code 3");
      expect(error.message).toContain("fatal: the crash tool was called");
      expect(error.message).toContain("not retried");

      const again = await pool.callTool("crashy", "echo", { text: "b" });
      const pid2 = await pool.pidOf("crashy");
      expect(pid2).not.toBe(pid1);
      expect(again.summary).toBe(`echo:b pid:${pid2}`);
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("fails every pending call on the crash, and replays none of them", async () => {
    const events: McpPoolEvent[] = [];
    const pool = createNodeMcpPool(
      { crashy: fixture("crash-server", { timeoutMs: 60_000 }), slow: fixture("hang-server") },
      { onEvent: (e) => events.push(e) },
    );
    try {
      await pool.callTool("crashy", "echo", {});
      // Three calls in flight on one session: the crash fails all of them.
      const results = await Promise.allSettled([
        pool.callTool("crashy", "crash", {}),
        pool.callTool("crashy", "crash", {}),
        pool.callTool("crashy", "crash", {}),
      ]);
      for (const r of results) {
        expect(r.status).toBe("rejected");
        expect((r as PromiseRejectedResult).reason.code).toBe("mcp_closed");
      }
      // One connect so far: nothing reconnected to replay the failed calls.
      expect(events.filter((e) => e.type === "connected" && e.server === "crashy")).toHaveLength(1);
    } finally {
      await pool.close();
    }
  }, 30_000);
});

describe("a server that never answers", () => {
  it("times out after the configured time, sends notifications/cancelled, ignores the late reply", async () => {
    const events: McpPoolEvent[] = [];
    // timeoutMs also bounds connect + initialize: leave room for a loaded machine.
    const pool = createNodeMcpPool(
      { slow: fixture("hang-server", { timeoutMs: 1_500 }) },
      { onEvent: (e) => events.push(e) },
    );
    try {
      const error = await caught(pool.callTool("slow", "hang", {}));
      expect(error.code).toBe("mcp_timeout");
      expect(error.message).toContain("MCP server 'slow' did not answer tools/call 'hang' within 1500 ms");
      expect(
        await waitUntil(() => events.some((e) => e.type === "stderr" && /cancelled request/.test(e.text))),
      ).toBe(true);

      // A reply arriving after its timeout is dropped; the session stays usable.
      const late = await caught(pool.callTool("slow", "late", { ms: 600 }, { timeoutMs: 200 }));
      expect(late.code).toBe("mcp_timeout");
      // The late reply arrives (and is dropped as unknown) whenever the loaded machine delivers it.
      expect(
        await waitUntil(() =>
          events.some((e) => e.type === "protocol_error" && /unknown message ID/.test(e.message)),
        ),
      ).toBe(true);
      const ok = await pool.callTool("slow", "echo", { text: "still here" });
      expect(ok.summary).toBe("echo:still here");
      expect(events.filter((e) => e.type === "connected")).toHaveLength(1);
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("lets a per-call timeoutMs override the server's and an abort signal cancel", async () => {
    const pool = createNodeMcpPool({ slow: fixture("hang-server", { timeoutMs: 60_000 }) });
    try {
      const error = await caught(pool.callTool("slow", "hang", {}, { timeoutMs: 150 }));
      expect(error.code).toBe("mcp_timeout");
      expect(error.message).toContain("150 ms");
      const controller = new AbortController();
      const pending = pool.callTool("slow", "hang", {}, { signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      const aborted = await caught(pending);
      expect(aborted.code).toBe("mcp_aborted");
    } finally {
      await pool.close();
    }
  }, 30_000);
});

describe("a server that prints garbage on stdout", () => {
  it("keeps the session: non-JSON lines are dropped and reported", async () => {
    const events: McpPoolEvent[] = [];
    const pool = createNodeMcpPool({ noisy: fixture("garbage-server") }, { onEvent: (e) => events.push(e) });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await pool.callTool("noisy", "echo", { text: String(i) });
        expect(r.summary).toBe(`echo:${i}`);
      }
      const garbage = events.filter((e) => e.type === "garbage").map((e) => (e as { line: string }).line);
      expect(garbage).toContain("Starting server... listening on stdio");
      expect(garbage).toContain("{not json at all");
      expect(events.filter((e) => e.type === "connected")).toHaveLength(1);
    } finally {
      await pool.close();
    }
  }, 30_000);
});

describe("a server that floods output", () => {
  it("caps a large text result, keeping head and tail on a UTF-8 boundary", async () => {
    const pool = createNodeMcpPool({ flood: fixture("flood-server") }, { outputBytes: 4096 });
    try {
      const r = await pool.callTool("flood", "big", { bytes: 2_000_000 });
      expect(r.success).toBe(true);
      expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(4096);
      expect(r.summary.startsWith("HEAD-MARK")).toBe(true);
      expect(r.summary.endsWith("TAIL-MARK")).toBe(true);
      expect(r.summary).toMatch(/…\[\d+ bytes truncated\]…/);
      expect(r.summary).not.toContain("\uFFFD");
      expect((r.data as { truncated: boolean }).truncated).toBe(true);
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("drops a reply over the message limit and fails that call at once; the session survives", async () => {
    const pool = createNodeMcpPool(
      { flood: fixture("flood-server", { timeoutMs: 60_000 }) },
      { stdioOptions: { maxMessageBytes: 1024 * 1024 } },
    );
    try {
      const error = await caught(pool.callTool("flood", "huge_line", { bytes: 3_000_000 }));
      expect(error.code).toBe("mcp_rpc_error");
      expect(error.message).toContain("MCP server 'flood'");
      expect(error.message).toMatch(/over the client's 1048576-byte message limit/);
      const last = await caught(pool.callTool("flood", "huge_line_id_last", { bytes: 3_000_000 }));
      expect(last.code).toBe("mcp_rpc_error");
      expect((await pool.callTool("flood", "echo", { text: "ok" })).summary).toBe("echo:ok");
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("drains a stderr flood and garbage flood without blocking the server", async () => {
    const pool = createNodeMcpPool({ flood: fixture("flood-server") });
    try {
      const r = await pool.callTool("flood", "noise", {});
      expect(r.summary).toBe("survived the noise");
    } finally {
      await pool.close();
    }
  }, 30_000);
});

describe("closing", () => {
  it("kills the whole process group, including a grandchild that ignores SIGTERM", async () => {
    const pool = createNodeMcpPool(
      { spawner: fixture("spawner-server") },
      { stdioOptions: { closeGraceMs: 200 } },
    );
    const r = await pool.callTool("spawner", "child_pid", {});
    const pgid = (await pool.pidOf("spawner")) as number;
    const grandchild = Number(r.summary);
    expect(liveGroupMembers(pgid)).toEqual(expect.arrayContaining([pgid, grandchild]));
    await pool.close();
    expect(liveGroupMembers(pgid)).toEqual([]);
    expect(isAlive(grandchild)).toBe(false);
  }, 30_000);

  it("reaps what a shell wrapper started (the npx / sh -c case)", async () => {
    const script = `${process.execPath} ${fixture("crash-server").args?.[0]}; echo wrapper-done`;
    const pool = createNodeMcpPool({ wrapped: { command: "sh", args: ["-c", script] } });
    const r = await pool.callTool("wrapped", "echo", { text: "x" });
    const serverPid = Number(/pid:(\d+)/.exec(r.summary)?.[1]);
    const pgid = (await pool.pidOf("wrapped")) as number;
    expect(serverPid).not.toBe(pgid);
    expect(liveGroupMembers(pgid)).toEqual(expect.arrayContaining([pgid, serverPid]));
    await pool.close();
    expect(liveGroupMembers(pgid)).toEqual([]);
    expect(isAlive(serverPid)).toBe(false);
  }, 30_000);

  it("a crashed server's leftover group members are killed too", async () => {
    const pool = createNodeMcpPool(
      { spawner: fixture("spawner-server") },
      { stdioOptions: { closeGraceMs: 200 } },
    );
    try {
      const r = await pool.callTool("spawner", "child_pid", {});
      const pgid = (await pool.pidOf("spawner")) as number;
      process.kill(pgid, "SIGKILL");
      expect(await waitUntil(() => liveGroupMembers(pgid).length === 0)).toBe(true);
      expect(isAlive(Number(r.summary))).toBe(false);
    } finally {
      await pool.close();
    }
  }, 30_000);
});

describe("startup failures", () => {
  it("names the server and the missing command", async () => {
    const pool = createNodeMcpPool({ ghost: { command: "definitely-not-a-command-xyz" } });
    const error = await caught(pool.callTool("ghost", "x", {}));
    expect(error.code).toBe("mcp_connect_failed");
    expect(error.message).toContain("MCP server 'ghost'");
    expect(error.message).toContain("'definitely-not-a-command-xyz' not found");
    await pool.close();
  }, 30_000);

  it("reports a server that exits before initialize, with its stderr", async () => {
    const pool = createNodeMcpPool({
      dead: { command: process.execPath, args: ["-e", "console.error('missing API_KEY'); process.exit(2)"] },
    });
    const error = await caught(pool.listTools("dead"));
    expect(error.code).toBe("mcp_connect_failed");
    expect(error.message).toContain("MCP server 'dead'");
    expect(error.message).toContain("exited with code 2");
    expect(error.message).toContain("missing API_KEY");
    await pool.close();
  }, 30_000);

  it("times out a server that never answers initialize, and leaves no process behind", async () => {
    // The process is found by a unique argument: it may not even have printed anything
    // before the timeout on a loaded machine.
    const marker = `capgate-mute-${process.pid}-${Date.now()}`;
    const pool = createNodeMcpPool({
      mute: {
        command: process.execPath,
        args: ["-e", "setInterval(() => {}, 1000)", marker],
        timeoutMs: 300,
      },
    });
    const error = await caught(pool.listTools("mute"));
    expect(error.code).toBe("mcp_connect_failed");
    expect(error.message).toBe("MCP server 'mute' did not answer initialize within 300 ms.");
    expect(processesWithArg(marker)).toEqual([]);
    await pool.close();
  }, 30_000);
});
