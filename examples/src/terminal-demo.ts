// capgate's offline demo as a terminal frontend, on @capgate/host alone: a bundled
// scripted model fixes a small broken project through the real gate (search, load, read,
// patch, a refused early finish, verify, finish), and every event prints as one line —
// coloured on a terminal, through the terminal pieces the capgate CLI uses too.
//
//   pnpm --filter @capgate/examples terminal
import { pathToFileURL } from "node:url";
import {
  describeEvent,
  type HostOptions,
  openHost,
  PLAIN_TEXT,
  runDemo,
  type TextStyle,
} from "@capgate/host";
import { paint, processIO } from "@capgate/host/terminal";

/** Run the demo, printing each event; resolves with the run's outcome. */
export async function runTerminalDemo(
  print: (line: string) => void = console.log,
  options: Omit<HostOptions, "workspace"> = {},
  style: TextStyle = PLAIN_TEXT,
): Promise<string> {
  const result = await runDemo({
    open: async (workspace) => {
      const host = await openHost({ ...options, workspace, runs: "local" });
      return { harness: host.harness, close: () => host.close() };
    },
    onEvent: (event) => {
      const line = describeEvent(event, style);
      if (line) print(line);
    },
  });
  print(result.verdict);
  return result.outcome;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // EPIPE-safe output (`… | head` ends the demo quietly), coloured only on a terminal.
  const io = processIO();
  process.exitCode = (await runTerminalDemo(io.out, {}, paint(io))) === "finished" ? 0 : 1;
}
