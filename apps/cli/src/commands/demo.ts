import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { runDemo } from "@capgate/host";
import { interruptible, printRunEvents } from "@capgate/host/terminal";
import { type GlobalOptions, openHarness } from "../context.js";
import { exitCodeForOutcome } from "../errors.js";
import { type CliIO, outputClosed, paint } from "../io.js";

/** Whether `capgate` is a command on PATH (the closing hint tells how to get it there when not). */
function capgateOnPath(): boolean {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, "capgate"), constants.X_OK);
      return true;
    } catch {
      // not in this one
    }
  }
  return false;
}

/**
 * `capgate demo`: offline, the host's demo (a bundled scripted model fixes a small broken
 * project in a temp workspace through the real gate), rendered, and where the trace is.
 */
export async function demoCommand(
  options: { json?: boolean; keep?: boolean },
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const p = paint(io);
  // Stop (and clean up the temp workspace) when our reader goes away: `capgate demo | head`.
  const stop = interruptible(io, { signals: false });
  try {
    const result = await runDemo({
      open: async (workspace) => {
        const harness = await openHarness(
          global,
          {
            workspace,
            approval: "never",
            // The demo's commands are its own bundled script, not a model's: without bubblewrap
            // (a fresh machine with only Node and npm) they run unsandboxed, said so up front.
            unsandboxedIfUnavailable: () =>
              io.err(
                p.yellow(
                  "note: bubblewrap is not installed, so the demo's own scripted commands run without the OS sandbox; real runs refuse commands until it is (apt-get install bubblewrap).",
                ),
              ),
          },
          { io },
        );
        return { harness, close: () => harness.close() };
      },
      onStart: (workspace) => {
        if (options.json) return;
        io.out(
          p.bold("capgate demo") +
            p.dim(" — a scripted model fixes a broken project through the gate (offline)"),
        );
        io.out(p.dim(`workspace: ${workspace}`));
      },
      onEvent: printRunEvents(io, { json: options.json === true }),
      signal: stop.signal,
      keep: options.keep === true,
    });
    if (outputClosed(io)) return 0;
    if (!options.json) {
      io.out("");
      io.out(`${p.bold("trace:")} ${result.tracePath}`);
      io.out(p.dim(`replay it with: capgate trace ${result.runId}`));
      if (!capgateOnPath())
        io.out(
          p.dim(
            `(capgate is not on your PATH: from a checkout run \`pnpm link:cli\`, or meanwhile: node ${process.argv[1] ?? "apps/cli/dist/bin.js"} trace ${result.runId})`,
          ),
        );
      io.out(p.dim(result.verdict));
    }
    return exitCodeForOutcome(result.outcome);
  } finally {
    stop.dispose();
  }
}
