import { needs, runReadmeExample } from "@capgate/test-system-parts";
import { expect, it } from "vitest";

const gitPart = needs(["git"]);

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: what it prints must be what its `// →` comments show.

it.skipIf(gitPart.skip)(`the README example runs and prints what it says${gitPart.note}`, async () => {
  const printed = await runReadmeExample({ srcDir: import.meta.dirname, packageName: "@capgate/git-guard" });
  expect(printed).toEqual([[[{ path: "sub/.git", kind: "repository" }]], ["sub/notes.txt\n"], [false]]);
});
