import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: what it prints must be what its `// →` comments show.
const file = join(import.meta.dirname, `.readme-example-${process.pid}.ts`);
afterEach(() => rmSync(file, { force: true }));

it("the README example runs and prints what it says", async () => {
  const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Example"));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code).toBeDefined();
  writeFileSync(file, `${code!.replace('from "@capgate/errors"', 'from "./index.js"')}\nexport {};\n`);
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import(/* @vite-ignore */ file);
  } finally {
    log.mockRestore();
  }
  expect(printed).toEqual([
    ["quota_exceeded", "calls"],
    ['{"code":"quota_exceeded","message":"More than 10 calls; wait a minute.","property":"calls"}'],
  ]);
});
