import { needs, runReadmeExample } from "@capgate/test-system-parts";
import { expect, it } from "vitest";

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: it must print a successful run, a policy denial, and a background process.

// The example runs its commands in the OS sandbox, as a user gets it: without bubblewrap it cannot.
const system = needs(["bwrap"]);

it.skipIf(system.skip)(
  `the README example runs${system.note}`,
  async () => {
    const printed = await runReadmeExample({
      srcDir: import.meta.dirname,
      packageName: "@capgate/capability-shell",
      section: "## Example: call the tools through the executor",
    });
    const lines = printed.map((args) => args.map(String).join(" "));
    const out = lines.join("\n");
    expect(out).toMatch(/^\$ node --version\nexit code 0\.\n--- stdout ---\nv\d+/);
    expect(out).toMatch(/policy_denied .*browser_panel\.open/);
    expect(out).toMatch(/p\d+ is running \(pid \d+\)/);
    expect(out).toMatch(/Stopped p\d+ and its child processes/);
  },
  30_000,
);
