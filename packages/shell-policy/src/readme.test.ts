import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: each printed result must be the one its `// →` comment shows.
const file = join(import.meta.dirname, `.readme-example-${process.pid}.ts`);
afterEach(() => rmSync(file, { force: true }));

it("the README example runs and prints what it says", async () => {
  const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Example"));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code).toBeDefined();
  writeFileSync(file, `${code!.replace('from "@capgate/shell-policy"', 'from "./index.js"')}\nexport {};\n`);
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import(/* @vite-ignore */ file);
  } finally {
    log.mockRestore();
  }
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
