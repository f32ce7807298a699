import { needs, runReadmeExample } from "@capgate/test-system-parts";
import { expect, it } from "vitest";

// Drives real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot.

it.skipIf(gitPart.skip)(
  `the README example runs${gitPart.note}`,
  async () => {
    const printed = await runReadmeExample({
      srcDir: import.meta.dirname,
      packageName: "@capgate/capability-git",
      section: "## Example: call the tools through the executor",
    });
    const lines = printed.map((args) => args.map(String).join(" "));
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
