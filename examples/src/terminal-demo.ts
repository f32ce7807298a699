// capgate's offline demo as a terminal frontend, on @capgate/host alone: a bundled
// scripted model fixes a small broken project through the real gate (search, load, read,
// patch, a refused early finish, verify, finish), and every event prints as one line —
// coloured on a terminal, through the terminal pieces the capgate CLI uses too.
//
//   pnpm --filter @capgate/examples terminal
import { rmSync } from "node:fs";
import { pathToFileURL } from "node:url";
import {
  createDemo,
  describeEvent,
  type HostOptions,
  openHost,
  PLAIN_TEXT,
  type TextStyle,
} from "@capgate/host";
import { paint, processIO } from "@capgate/host/terminal";

/** Run the demo, printing each event; resolves with the run's outcome. */
export async function runDemo(
  print: (line: string) => void = console.log,
  options: Omit<HostOptions, "workspace"> = {},
  style: TextStyle = PLAIN_TEXT,
): Promise<string> {
  const demo = await createDemo();
  const host = await openHost({ ...options, workspace: demo.workspace, runs: "local" });
  try {
    const result = await host.harness.runGoal({
      goal: demo.goal,
      model: demo.model,
      maxSteps: demo.maxSteps,
      onEvent: (event) => {
        const line = describeEvent(event, style);
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
  // EPIPE-safe output (`… | head` ends the demo quietly), coloured only on a terminal.
  const io = processIO();
  process.exitCode = (await runDemo(io.out, {}, paint(io))) === "finished" ? 0 : 1;
}
