// capgate's offline demo as a terminal frontend, on @capgate/host alone: a bundled
// scripted model fixes a small broken project through the real gate (search, load, read,
// patch, a refused early finish, verify, finish), and every event prints as one line.
//
//   pnpm --filter @capgate/examples terminal
import { rmSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { createDemo, describeEvent, type HostOptions, openHost } from "@capgate/host";

/** Run the demo, printing each event; resolves with the run's outcome. */
export async function runDemo(
  print: (line: string) => void = console.log,
  options: Omit<HostOptions, "workspace"> = {},
): Promise<string> {
  const demo = await createDemo();
  const host = await openHost({ ...options, workspace: demo.workspace, runs: "local" });
  try {
    const result = await host.harness.runGoal({
      goal: demo.goal,
      model: demo.model,
      maxSteps: demo.maxSteps,
      onEvent: (event) => {
        const line = describeEvent(event);
        if (line) print(line);
      },
    });
    print(demo.fixed() ? "math.js now adds; the tests pass." : "math.js was not fixed.");
    return result.outcome;
  } finally {
    await host.close();
    rmSync(demo.workspace, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = (await runDemo()) === "finished" ? 0 : 1;
}
