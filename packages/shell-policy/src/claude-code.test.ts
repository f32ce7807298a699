import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as hook from "./claude-code.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-hook-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// `capgate hook claude-code` drives this end to end (apps/cli/src/hook/claude-code.test.ts);
// here: the subpath's surface and the decision without a process around it.
describe("@capgate/shell-policy/claude-code", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(hook).sort()).toEqual(["decideHook", "hookConfigPath", "runClaudeCodeHook"]);
  });

  it("denies a GUI opener, stays silent on other tools, and applies the nearest config's rules", async () => {
    writeFileSync(
      join(root, "capgate.config.json"),
      JSON.stringify({ shell: { deny: [{ prefix: ["rm", "-rf"] }] } }),
    );
    const bash = (command: string) => ({ tool_name: "Bash", tool_input: { command }, cwd: root });
    expect(await hook.decideHook(bash("xdg-open https://example.com"), { cwd: root })).toMatchObject({
      decision: "deny",
    });
    expect(await hook.decideHook(bash("rm -rf build"), { cwd: root })).toMatchObject({ decision: "deny" });
    expect(await hook.decideHook(bash("ls -la"), { cwd: root })).toEqual({ decision: "allow" });
    expect(await hook.decideHook({ tool_name: "Read", tool_input: {} }, { cwd: root })).toBeUndefined();
    expect(hook.hookConfigPath(undefined, join(root), undefined)).toBe(join(root, "capgate.config.json"));
  });
});
