import { runReadmeExample } from "@capgate/test-system-parts";
import { expect, it } from "vitest";

// The README's example, run as written (the package import pointed at the source), so it
// cannot rot: what it prints must be what its `// →` comments show.

it("the README example runs and prints what it says", async () => {
  const printed = await runReadmeExample({ srcDir: import.meta.dirname, packageName: "@capgate/net-guard" });
  expect(printed).toEqual([["policy_denied"], ["example.com"]]);
});
