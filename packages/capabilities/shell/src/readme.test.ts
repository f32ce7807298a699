import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, expect, it, vi } from "vitest";

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: it must print a successful run, a policy denial, and a background process.
const file = join(import.meta.dirname, `.readme-example-${process.pid}.ts`);
afterEach(() => rmSync(file, { force: true }));

// The example runs its commands in the OS sandbox, as a user gets it: without bubblewrap it cannot.
const system = needs(["bwrap"]);

it.skipIf(system.skip)(
  `the README example runs${system.note}`,
  async () => {
    const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Example: call the tools through the executor"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    writeFileSync(
      file,
      `${code!.replace('from "@capgate/capability-shell"', 'from "./index.js"')}\nexport {};\n`,
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
    const out = lines.join("\n");
    expect(out).toMatch(/^\$ node --version\nexit code 0\.\n--- stdout ---\nv\d+/);
    expect(out).toMatch(/policy_denied .*browser_panel\.open/);
    expect(out).toMatch(/p\d+ is running \(pid \d+\)/);
    expect(out).toMatch(/Stopped p\d+ and its child processes/);
  },
  30_000,
);
