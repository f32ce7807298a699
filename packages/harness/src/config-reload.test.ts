import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { processesWith, shellForTests } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { type CapgateConfig, loadConfig } from "./config.js";
import { type ConfigReloadOutcome, watchConfig } from "./config-watch.js";
import { createHarness, type Harness } from "./harness.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "mcp-client", "test", "fixtures");
const stateServer = (marker: string) => ({
  command: process.execPath,
  args: [join(FIXTURES, "state-server.mjs"), marker],
});
const featureServer = () => ({ command: process.execPath, args: [join(FIXTURES, "feature-server.mjs")] });

const open: Harness[] = [];
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

/**
 * A harness on a config file beside its workspace (one in it is not watched), watched;
 * `next()` resolves with the next reload's outcome.
 */
async function watched(config: CapgateConfig, where: "beside" | "in" = "beside") {
  const root = mkdtempSync(join(tmpdir(), "capgate-reload-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const path = join(where === "in" ? workspace : root, "capgate.config.json");
  const write = (value: CapgateConfig | string) => {
    // As editors save: a new file renamed over the old one.
    writeFileSync(
      `${path}.tmp`,
      typeof value === "string" ? value : JSON.stringify({ ...value, shell: shellForTests() }),
    );
    renameSync(`${path}.tmp`, path);
  };
  write(config);
  const h = await createHarness({ workspace, stateDir: join(root, "state"), config: loadConfig({ path }) });
  open.push(h);
  const outcomes: ConfigReloadOutcome[] = [];
  const waiting: Array<(o: ConfigReloadOutcome) => void> = [];
  const watchErrors: string[] = [];
  const watcher = watchConfig(h, {
    path,
    debounceMs: 50,
    onWatchError: (error) => watchErrors.push(error.message),
    onReload: (o) => {
      const w = waiting.shift();
      if (w) w(o);
      else outcomes.push(o);
    },
  });
  const next = () =>
    new Promise<ConfigReloadOutcome>((resolve) => {
      const o = outcomes.shift();
      if (o) resolve(o);
      else waiting.push(resolve);
    });
  return { h, path, write, next, watcher, watchErrors, outcomes };
}

const pidsOf = (marker: string) =>
  processesWith(marker)
    .map((p) => p.pid)
    .sort();
const recall = async (h: Harness, server: string) =>
  (await h.callTool(`${server}/recall`, {})).result.summary;

describe("reloading the config of a running harness", () => {
  it("does not watch a config file in the workspace (the model can write there); a request still reloads it", async () => {
    const { write, watcher, watchErrors, outcomes } = await watched({}, "in");
    expect(watchErrors).toEqual([
      expect.stringContaining("inside the workspace, where the model can write it"),
    ]);
    // What a model could do through an MCP server's file tools: add a server of its own.
    write({ mcpServers: { planted: { command: process.execPath, args: ["-e", "0"] } } });
    // Only an operator's request reads it (this harness started without MCP servers, so the
    // first one is reported as needing a restart: the request did read the edit).
    const requested = await watcher.reload();
    expect(requested.trigger).toBe("request");
    expect(requested.ok && requested.result.needsRestart).toEqual(["mcpServers"]);
    expect(outcomes.every((o) => o.trigger === "request")).toBe(true);
  });

  it("starts added servers, ends removed ones, restarts changed ones and keeps unchanged ones' sessions; search follows", async () => {
    const id = `${process.pid}-${Date.now()}`;
    const [kept, gone, edited] = [`kept-${id}`, `gone-${id}`, `edited-${id}`];
    const { h, write, next, watcher } = await watched({
      mcpServers: { kept: stateServer(kept), gone: stateServer(gone), edited: stateServer(edited) },
    });
    for (const server of ["kept", "gone", "edited"])
      expect((await h.callTool(`${server}/remember`, { value: server })).result.success).toBe(true);
    await h.indexMcpTools();
    const keptPids = pidsOf(kept);
    const session = await recall(h, "kept");
    expect(pidsOf(gone).length).toBeGreaterThan(0);
    const editedPids = pidsOf(edited);
    expect(h.registry.get("mcp:gone")).toBeDefined();

    write({
      mcpServers: {
        kept: stateServer(kept),
        edited: { ...stateServer(edited), env: { CHANGED: "1" } },
        feat: featureServer(),
      },
    });
    const outcome = await next();
    expect(outcome.ok && outcome.result).toEqual({
      added: ["feat"],
      removed: ["gone"],
      changed: ["edited"],
      unchanged: ["kept"],
      needsRestart: [],
    });
    // Unchanged: the same processes and the same session (it still holds what it was told).
    expect(pidsOf(kept)).toEqual(keptPids);
    expect(await recall(h, "kept")).toBe(session);
    // Removed: its processes are gone and its tools with them.
    expect(pidsOf(gone)).toEqual([]);
    expect(h.registry.get("mcp:gone")).toBeUndefined();
    expect(h.mcp?.serverNames()).toEqual(["kept", "edited", "feat"]);
    expect(Object.keys(h.config.mcpServers ?? {})).toEqual(["kept", "edited", "feat"]);
    // Changed: a new process, with none of the old session's state.
    expect(await recall(h, "edited")).toMatch(/value:$/);
    expect(pidsOf(edited)).not.toEqual(editedPids);
    // Added: searchable once indexed, and callable.
    await h.indexMcpTools();
    expect(h.registry.get("mcp:feat")?.tools.map((t) => t.name)).toContain("feat/alpha");
    // The server's own tools/list_changed re-indexes search too.
    await h.callTool("feat/add_tool", { name: "zeta_reindexed" });
    await expect
      .poll(() => h.registry.get("mcp:feat")?.tools.map((t) => t.name), { timeout: 30_000 })
      .toContain("feat/zeta_reindexed");
    watcher.close();
  }, 120_000);

  it("refuses an invalid edit with the loader's own error and keeps the last good config; a deleted file comes back", async () => {
    const kept = `kept-${process.pid}-${Date.now()}`;
    const { h, path, write, next, watcher } = await watched({ mcpServers: { kept: stateServer(kept) } });
    await h.callTool("kept/remember", { value: "still here" });
    const pids = pidsOf(kept);

    const refusedAs = (text: string): string => {
      writeFileSync(`${path}.check`, text);
      try {
        loadConfig({ path: `${path}.check` });
      } catch (error) {
        return (error as Error).message.replaceAll(`${path}.check`, path);
      } finally {
        rmSync(`${path}.check`);
      }
      throw new Error("expected the loader to refuse it");
    };
    for (const bad of [
      '{ "mcpServers": { "kept": ',
      JSON.stringify({ mcpServers: { kept: stateServer(kept) }, mcpServer: {} }),
      JSON.stringify({ mcpServers: { kept: { ...stateServer(kept), timeoutMs: "soon" } } }),
    ]) {
      write(bad);
      const outcome = await next();
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && outcome.error.message).toBe(refusedAs(bad));
      expect(await recall(h, "kept")).toMatch(/value:still here$/);
      expect(pidsOf(kept)).toEqual(pids);
    }

    rmSync(path);
    const deleted = await next();
    expect(!deleted.ok && deleted.error.message).toContain("does not exist");
    expect(await recall(h, "kept")).toMatch(/value:still here$/);

    // Back, with a field that applies only at start: reported, not applied.
    write({ mcpServers: { kept: stateServer(kept) }, stateDir: "/elsewhere" });
    const back = await next();
    expect(back.ok && back.result).toEqual({
      added: [],
      removed: [],
      changed: [],
      unchanged: ["kept"],
      needsRestart: ["stateDir"],
    });
    expect(h.config.stateDir).toBeUndefined();
    expect(pidsOf(kept)).toEqual(pids);
    // An explicit reload (SIGHUP's) reads the file again.
    const asked = await watcher.reload();
    expect(asked.ok && asked.trigger).toBe("request");
    watcher.close();
  }, 120_000);
});
