import { afterEach, describe, expect, it } from "vitest";
import type { McpServersMap } from "./config.js";
import type { McpPool } from "./pool.js";
import { createNodeMcpPool } from "./stdio/node-pool.js";
import { everything, fixture, isAlive } from "./test-support/fixtures.js";

const pools: McpPool[] = [];
function pool(servers: McpServersMap): McpPool {
  const p = createNodeMcpPool(servers);
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const recall = async (p: { callTool: McpPool["callTool"] }, server: string) =>
  (await p.callTool(server, "recall", {})).summary;

describe("McpPool.reconfigure", () => {
  it("keeps unchanged servers' sessions, closes removed ones, restarts changed ones and starts added ones lazily", async () => {
    const p = pool({
      kept: fixture("state-server"),
      gone: fixture("state-server"),
      edited: fixture("state-server", { env: { EDIT: "1" } }),
    });
    for (const server of ["kept", "gone", "edited"])
      await p.callTool(server, "remember", { value: `${server}-value` });
    const [keptPid, gonePid, editedPid] = await Promise.all(
      ["kept", "gone", "edited"].map((s) => p.pidOf(s)),
    );
    const keptSession = await recall(p, "kept");

    await p.reconfigure(
      {
        kept: fixture("state-server"),
        edited: fixture("state-server", { env: { EDIT: "2" } }),
        added: everything(),
      },
      ["edited"],
    );

    expect(p.serverNames()).toEqual(["kept", "edited", "added"]);
    // The same session: same process, and the value it was told is still there.
    expect(await p.pidOf("kept")).toBe(keptPid);
    expect(await recall(p, "kept")).toBe(keptSession);
    // Removed: its process has ended by the time reconfigure resolves, and it is no longer callable.
    expect(isAlive(gonePid as number)).toBe(false);
    await expect(p.callTool("gone", "recall", {})).rejects.toThrow(/No enabled MCP server named 'gone'/);
    // Changed: the old process ended; the next call starts the new entry with fresh state.
    expect(isAlive(editedPid as number)).toBe(false);
    expect(await p.pidOf("edited")).toBeUndefined();
    expect(await recall(p, "edited")).toMatch(/value:$/);
    expect(await p.pidOf("edited")).not.toBe(editedPid);
    // Added: nothing started until it is used.
    expect(await p.pidOf("added")).toBeUndefined();
    expect((await p.callTool("added", "echo", { message: "hello" })).summary).toContain("hello");
  }, 60_000);

  it("ends a removed server's sessions in every gate scope too, and keeps an unchanged server's scoped session", async () => {
    const p = pool({ kept: fixture("state-server"), gone: fixture("state-server") });
    const scope = p.scope();
    await scope.callTool("kept", "remember", { value: "mine" });
    await scope.callTool("gone", "remember", { value: "mine" });
    const [keptPid, gonePid] = [await scope.pidOf("kept"), await scope.pidOf("gone")];
    expect(gonePid).toBeTypeOf("number");

    await p.reconfigure({ kept: fixture("state-server") });

    expect(isAlive(gonePid as number)).toBe(false);
    expect(await scope.pidOf("kept")).toBe(keptPid);
    expect(await recall(scope, "kept")).toMatch(/value:mine$/);
    expect(Object.keys(scope.servers)).toEqual(["kept"]);
    await scope.close();
  }, 60_000);

  it("refuses an invalid map without changing anything", async () => {
    const p = pool({ kept: fixture("state-server") });
    await p.callTool("kept", "remember", { value: "v" });
    const pid = await p.pidOf("kept");
    await expect(p.reconfigure({ kept: fixture("state-server"), bad: { url: "not a url" } })).rejects.toThrow(
      /bad/,
    );
    expect(p.serverNames()).toEqual(["kept"]);
    expect(await p.pidOf("kept")).toBe(pid);
  }, 60_000);
});
