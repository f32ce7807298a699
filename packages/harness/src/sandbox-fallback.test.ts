// `unsandboxedIfUnavailable`: the demo's bundled commands run where bubblewrap cannot
// start (a fresh machine with only Node and npm), said so once; nothing else changes.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs, shellForTests } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { createHarness, SANDBOX_OFF_WARNING } from "./harness.js";

const bwrap = needs(["bwrap"]);
const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-sandbox-fallback-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const missing = { shell: { bwrap: join(root, "no-such-bwrap") } };
const workspace = join(root, "ws");
mkdirSync(workspace);
const place = (name: string) => ({ workspace, stateDir: join(root, name), processEnv: { HOME: root } });

describe("unsandboxedIfUnavailable", () => {
  it("where bubblewrap cannot start: tells the reason once, turns the sandbox off, and commands run", async () => {
    const reasons: string[] = [];
    const h = await createHarness({
      config: missing,
      ...place("fallback"),
      unsandboxedIfUnavailable: (reason) => reasons.push(reason),
    });
    try {
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toContain("no-such-bwrap");
      expect(h.config.shell?.sandbox).toBe("off");
      // The callback said it: the sandbox-off warning is not a second line for the same thing.
      expect(h.notices).not.toContain(SANDBOX_OFF_WARNING);
      const outcome = await h.callTool("shell.run", { command: "echo unsandboxed" });
      expect(outcome.result.summary).toContain("unsandboxed");
    } finally {
      await h.close();
    }
  });

  it("leaves MCP servers out of the fallback: none starts under the sandbox-off policy", async () => {
    const h = await createHarness({
      config: { ...missing, mcpServers: { srv: { command: "node", args: ["-e", "0"], sandbox: true } } },
      ...place("fallback-mcp"),
      unsandboxedIfUnavailable: () => undefined,
    });
    try {
      expect(h.config.shell?.sandbox).toBe("off");
      expect(h.config.mcpServers ?? {}).toEqual({});
      expect(h.mcp).toBeUndefined();
    } finally {
      await h.close();
    }
  });

  it("without it, the same config refuses commands (never silently unsandboxed)", async () => {
    const h = await createHarness({ config: missing, ...place("strict") });
    try {
      expect(h.config.shell?.sandbox).not.toBe("off");
      const outcome = await h.callTool("shell.run", { command: "echo hi" }).catch((e: Error) => e);
      const text = outcome instanceof Error ? outcome.message : outcome.result.summary;
      expect(outcome instanceof Error || !outcome.result.success).toBe(true);
      expect(text).toContain("bubblewrap");
    } finally {
      await h.close();
    }
  });

  it.skipIf(bwrap.skip)(
    `where bubblewrap starts, it is not called and the sandbox stays on${bwrap.note}`,
    async () => {
      const reasons: string[] = [];
      const h = await createHarness({
        config: { shell: shellForTests() },
        ...place("available"),
        unsandboxedIfUnavailable: (reason) => reasons.push(reason),
      });
      try {
        expect(reasons).toEqual([]);
        expect(h.config.shell?.sandbox).not.toBe("off");
      } finally {
        await h.close();
      }
    },
  );
});
