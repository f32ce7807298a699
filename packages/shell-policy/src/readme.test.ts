import { runReadmeExample } from "@capgate/test-system-parts";
import { expect, it } from "vitest";

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: what it prints must be what its `// →` comments show.

it("the README example runs and prints what it says", async () => {
  const printed = await runReadmeExample({
    srcDir: import.meta.dirname,
    packageName: "@capgate/shell-policy",
  });
  expect(printed).toHaveLength(7);
  expect(printed[0]).toEqual([{ decision: "allow" }]);
  expect(printed[1]?.[0]).toMatchObject({
    decision: "deny",
    rule: "gui.xdg-open",
    reason: expect.stringContaining("Use browser_panel.open"),
  });
  expect(printed[2]?.[0]).toMatchObject({
    decision: "deny",
    rule: "unresolvable",
    reason: expect.stringContaining("only known at run time"),
  });
  expect(printed[3]).toEqual([
    { decision: "deny", rule: "deny[0]", reason: "`sudo rm -r -f build` no recursive deletes" },
  ]);
  expect(printed[4]?.[0]).toMatchObject({ decision: "ask", rule: "ask[0]" });
  expect(printed[5]).toEqual(["invalid_config", "policy.shell.deny[0].prefix"]);
  expect(printed[6]).toEqual([
    String.raw`printf '%s\n' 'it'\''s'`,
    { ok: true, argv: ["printf", "%s\\n", "it's"] },
  ]);
}, 60_000);

it("the README's Claude Code hook example runs and prints what it says", async () => {
  const printed = await runReadmeExample({
    srcDir: import.meta.dirname,
    packageName: "@capgate/shell-policy/claude-code",
    entry: "./claude-code.js",
    section: "## The Claude Code hook: `@capgate/shell-policy/claude-code`",
  });
  expect(printed).toHaveLength(5);
  expect(printed[0]?.[0]).toMatchObject({
    decision: "deny",
    reason: expect.stringContaining("Use browser_panel.open to open web pages (never the shell)."),
  });
  expect(printed[1]?.[0]).toMatchObject({
    decision: "ask",
    updatedInput: {
      command: expect.stringMatching(
        /^\/usr\/local\/bin\/capgate sandbox-exec --workspace \S+ --config \S+ -- 'git push origin main'$/,
      ),
    },
  });
  expect(printed[2]).toEqual([undefined]);
  expect(JSON.parse(String(printed[3]?.[0]))).toMatchObject({
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
  });
  expect(printed[4]).toEqual([0]);
}, 60_000);
