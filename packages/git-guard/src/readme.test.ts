import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, expect, it, vi } from "vitest";

const gitPart = needs(["git"]);

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: each printed result must be the one its `// →` comment shows.
const file = join(import.meta.dirname, `.readme-example-${process.pid}.ts`);
afterEach(() => rmSync(file, { force: true }));

it.skipIf(gitPart.skip)(`the README example runs and prints what it says${gitPart.note}`, async () => {
  const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Example"));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code).toBeDefined();
  writeFileSync(file, `${code!.replace('from "@capgate/git-guard"', 'from "./index.js"')}\nexport {};\n`);
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import(/* @vite-ignore */ file);
  } finally {
    log.mockRestore();
  }
  expect(printed).toEqual([[[{ path: "sub/.git", kind: "repository" }]], ["sub/notes.txt\n"], [false]]);
});
