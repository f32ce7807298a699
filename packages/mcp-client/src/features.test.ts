import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { McpPoolEvent } from "./pool-types.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { everything, fixture, waitUntil } from "./test-support/fixtures.js";

// feature-server also lists the tools the tests drive it with.
const CONTROLS = ["add_tool", "list_calls", "ask_sampling", "ask_with_defaults", "ask_elicitation"];

const stateDir = mkdtempSync(join(tmpdir(), "capgate-mcp-"));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe("tool lists", () => {
  it("follows nextCursor across pages and lists only once while the cache is fresh", async () => {
    const pool = createNodeMcpPool({ feat: fixture("feature-server") });
    try {
      const tools = await pool.listTools("feat");
      expect(tools.map((t) => t.name)).toEqual(["alpha", "beta", "gamma", ...CONTROLS]);
      await pool.listTools("feat");
      await pool.hasTool("feat", "beta");
      expect((await pool.callTool("feat", "list_calls", {})).summary).toBe("1");
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("refreshes on notifications/tools/list_changed", async () => {
    const events: McpPoolEvent[] = [];
    const pool = createNodeMcpPool({ feat: fixture("feature-server") }, { onEvent: (e) => events.push(e) });
    try {
      expect(await pool.hasTool("feat", "delta")).toBe(false);
      await pool.callTool("feat", "add_tool", { name: "delta" });
      expect(await waitUntil(() => events.some((e) => e.type === "tools_changed"))).toBe(true);
      const changed = events.find((e) => e.type === "tools_changed") as { tools: Array<{ name: string }> };
      expect(changed.tools.map((t) => t.name)).toContain("delta");
      expect(await pool.hasTool("feat", "delta")).toBe(true);
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("refreshes lazily on list_changed when nobody listens for events", async () => {
    const pool = createNodeMcpPool({ feat: fixture("feature-server") });
    try {
      expect(await pool.hasTool("feat", "epsilon")).toBe(false);
      await pool.callTool("feat", "add_tool", { name: "epsilon" });
      // The next look after the notification arrives refreshes the list.
      expect(await waitUntil(() => pool.hasTool("feat", "epsilon"))).toBe(true);
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("keeps a disk cache keyed by server and config hash, so search works before connecting", async () => {
    const config = fixture("feature-server");
    const first = createNodeMcpPool({ feat: config }, { stateDir });
    await first.listTools("feat");
    await first.close();
    expect(readdirSync(join(stateDir, "mcp-tools")).filter((f) => f.startsWith("feat@"))).toHaveLength(1);

    const second = createNodeMcpPool({ feat: config }, { stateDir });
    const known = await second.knownTools();
    expect(known).toEqual([
      expect.objectContaining({ server: "feat", source: "cache", tools: expect.any(Array) }),
    ]);
    expect(known[0]?.tools.map((t) => t.name)).toEqual(["alpha", "beta", "gamma", ...CONTROLS]);
    expect(await second.pidOf("feat")).toBeUndefined();
    await second.close();

    // An edited entry has another hash: its old list is not served.
    const edited = createNodeMcpPool({ feat: { ...config, env: { X: "1" } } }, { stateDir });
    expect((await edited.knownTools())[0]?.source).toBe("none");
    await edited.close();
  }, 30_000);

  it("listAllTools: live where it answers in time, else cached, else none — never throws", async () => {
    // The same config entry (same hash) that works once and then fails to start.
    const block = join(stateDir, "block");
    const script = `[ -e '${block}' ] && { echo blocked >&2; exit 1; }; exec '${process.execPath}' '${fixture("feature-server").args?.[0]}'`;
    const flaky = { command: "sh", args: ["-c", script] };
    const warm = createNodeMcpPool({ flaky }, { stateDir });
    expect((await warm.listAllTools())[0]?.source).toBe("live");
    await warm.close();
    writeFileSync(block, "");

    const pool = createNodeMcpPool(
      {
        live: fixture("garbage-server"),
        flaky,
        mute: { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"], timeoutMs: 60_000 },
        ghost: { command: "definitely-not-a-command-xyz" },
      },
      { stateDir },
    );
    try {
      const all = await pool.listAllTools({ connectTimeoutMs: 3_000 });
      expect(all.map((s) => [s.server, s.source])).toEqual([
        ["live", "live"],
        ["flaky", "cache"],
        ["mute", "none"],
        ["ghost", "none"],
      ]);
      expect(all[1]?.tools.map((t) => t.name)).toEqual(["alpha", "beta", "gamma", ...CONTROLS]);
      expect(all[1]?.error).toContain("blocked");
      expect(all[2]?.error).toContain("did not list its tools within 3000 ms");
      expect(all[3]?.error).toContain("not found");
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("a listing that outlasted the budget and completed since is what listAllTools and listedTools give, not the cache", async () => {
    // Found under load: search indexing got "none" for a slow server while its listing went
    // on; when the listing completed, the stale entry replaced it and search lost the server.
    const events: McpPoolEvent[] = [];
    const pool = createNodeMcpPool(
      { slow: fixture("slow-list-server", { args: [fixture("slow-list-server").args![0]!, "1500"] }) },
      { stateDir, onEvent: (e) => events.push(e) },
    );
    try {
      const first = await pool.listAllTools({ connectTimeoutMs: 200 });
      expect(first[0]).toMatchObject({ server: "slow", source: "none", tools: [] });
      expect(pool.listedTools("slow")).toBeUndefined();
      expect(await waitUntil(() => events.some((e) => e.type === "tools_listed"))).toBe(true);
      expect(pool.listedTools("slow")?.map((t) => t.name)).toEqual(["slow_echo"]);
      const second = await pool.listAllTools({ connectTimeoutMs: 200 });
      expect(second[0]).toMatchObject({ server: "slow", source: "live" });
      expect(second[0]?.tools.map((t) => t.name)).toEqual(["slow_echo"]);
    } finally {
      await pool.close();
    }
  }, 30_000);
});

describe("server-initiated requests", () => {
  it("answers sampling and elicitation with a polite JSON-RPC error when the host installed no handler", async () => {
    const pool = createNodeMcpPool({ feat: fixture("feature-server") });
    try {
      const sampling = JSON.parse((await pool.callTool("feat", "ask_sampling", {})).summary);
      expect(sampling.error.code).toBe(-32601);
      expect(sampling.error.message).toContain("does not offer sampling");
      const elicitation = JSON.parse((await pool.callTool("feat", "ask_elicitation", {})).summary);
      expect(elicitation.error.code).toBe(-32601);
      expect(elicitation.error.message).toContain("cannot ask the user for input");
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("routes them to the host's handlers when installed (server-everything's sampling tool)", async () => {
    const seen: string[] = [];
    const pool = createNodeMcpPool(
      { everything: everything({ sampling: true }) },
      {
        onSampling: async ({ server, params }) => {
          seen.push(`${server}:${JSON.stringify(params.messages[0]?.content)}`);
          return { role: "assistant", content: { type: "text", text: "sampled by the host" }, model: "test" };
        },
        onElicitation: async () => ({ action: "decline" }),
      },
    );
    try {
      // The tool is registered only for clients that declare sampling, after initialize (the
      // server announces it with list_changed).
      expect(await waitUntil(() => pool.hasTool("everything", "trigger-sampling-request"))).toBe(true);
      const r = await pool.callTool("everything", "trigger-sampling-request", { prompt: "hi", maxTokens: 5 });
      expect(r.success).toBe(true);
      expect(r.summary).toContain("sampled by the host");
      expect(seen[0]).toMatch(/^everything:/);
    } finally {
      await pool.close();
    }
  }, 30_000);

  it("refuses sampling for a server whose entry does not allow it, even with a handler", async () => {
    let asked = 0;
    const pool = createNodeMcpPool(
      { feat: fixture("feature-server") },
      {
        onSampling: async () => {
          asked++;
          return { role: "assistant", content: { type: "text", text: "should not happen" }, model: "m" };
        },
      },
    );
    try {
      const sampling = JSON.parse((await pool.callTool("feat", "ask_sampling", {})).summary);
      expect(sampling.error.code).toBe(-32601);
      expect(asked).toBe(0);
    } finally {
      await pool.close();
    }
    const allowed = createNodeMcpPool(
      { feat: fixture("feature-server", { sampling: true }) },
      {
        onSampling: async ({ server }) => {
          asked++;
          return {
            role: "assistant",
            content: { type: "text", text: `model answer for ${server}` },
            model: "m",
          };
        },
      },
    );
    try {
      const sampling = JSON.parse((await allowed.callTool("feat", "ask_sampling", {})).summary);
      expect(sampling.result.content.text).toBe("model answer for feat");
      expect(asked).toBe(1);
    } finally {
      await allowed.close();
    }
  }, 30_000);

  it("elicitation: accepted answers get the schema's defaults filled in; a decline reaches the server as such", async () => {
    const answers: Array<"accept" | "decline"> = ["accept", "decline"];
    const seen: string[] = [];
    const pool = createNodeMcpPool(
      { feat: fixture("feature-server") },
      {
        onElicitation: async ({ server, params }) => {
          seen.push(`${server}:${params.message}`);
          const action = answers.shift() ?? "decline";
          // The person answered only the field without a default.
          return action === "accept" ? { action, content: { note: "ship it" } } : { action };
        },
      },
    );
    try {
      const accepted = JSON.parse((await pool.callTool("feat", "ask_with_defaults", {})).summary);
      expect(accepted.result).toEqual({
        action: "accept",
        content: { note: "ship it", region: "eu", replicas: 3, dryRun: true },
      });
      const declined = JSON.parse((await pool.callTool("feat", "ask_with_defaults", {})).summary);
      expect(declined.result).toEqual({ action: "decline" });
      expect(seen).toEqual(["feat:Deploy settings?", "feat:Deploy settings?"]);
    } finally {
      await pool.close();
    }
  }, 30_000);
});
