import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, expect, it, vi } from "vitest";

// Drives real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot.
const file = join(import.meta.dirname, `.readme-example-${process.pid}.ts`);
afterEach(() => rmSync(file, { force: true }));

it.skipIf(gitPart.skip)(
  `the README example runs${gitPart.note}`,
  async () => {
    const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Example: call the tools through the executor"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    writeFileSync(
      file,
      `${code!.replace('from "@capgate/capability-git"', 'from "./index.js"')}\nexport {};\n`,
    );
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    });
    try {
      await import(/* @vite-ignore */ file);
    } finally {
      log.mockRestore();
    }
    expect(lines[0]).toBe(
      "On branch main — no commits yet\n?? hello.txt\n0 staged, 0 unstaged, 1 untracked.",
    );
    expect(lines[1]).toMatch(
      /^Committed [0-9a-f]{7} on main\.\n\[main \(root-commit\) [0-9a-f]{7}\] Say hello/,
    );
    expect(lines[2]).toMatch(/^Switched to a new branch 'feature\/greeting'/);
    expect(lines[3]).toMatch(/^1 commit, newest first:\n[0-9a-f]{7} \d{4}-\d\d-\d\d Example: Say hello$/);
    expect(lines[4]).toBe("invalid_arguments");
  },
  30_000,
);
