import { needs, runReadmeExample } from "@capgate/test-system-parts";
import { afterAll, expect, it } from "vitest";
import { closeEgressProxies } from "./sandbox-proxy.js";

// The README's runCommandLineSandboxed example, run as written (the package import pointed at
// the source) in real bubblewrap, so it cannot rot.
const system = needs(["bwrap", "socat"]);

afterAll(() => closeEgressProxies());

it.skipIf(system.skip)(
  `the README's one-command-line example runs and prints what it says${system.note}`,
  async () => {
    const printed = await runReadmeExample({
      srcDir: import.meta.dirname,
      packageName: "@capgate/sandbox",
      section: "## Example: one command line in the sandbox",
    });
    expect(printed).toHaveLength(3);
    expect(printed[0]).toEqual([3, "token=unset"]);
    expect(printed[1]?.[0]).toMatch(
      /^capgate sandbox-exec: the command was not run: the config file \S+\/capgate\.config\.json does not exist$/,
    );
    expect(printed[2]).toEqual([125]);
  },
  120_000,
);
