import { accessSync, constants, rmSync } from "node:fs";
import { delimiter, join } from "node:path";
import { createDemo, describeEvent } from "@capgate/host";
import type { RunEvent } from "@capgate/loop";
import { type GlobalOptions, openHarness } from "../context.js";
import { exitCodeForOutcome } from "../errors.js";
import { type CliIO, outputClosed, paint } from "../io.js";
import { printJsonLine } from "../json.js";

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
  const demo = await createDemo();
  const { workspace } = demo;
  // Stop (and clean up the temp workspace) when our reader goes away: `capgate demo | head`.
  const stop = new AbortController();
  const onClosed = () => stop.abort(new Error("the output pipe was closed"));
  io.closed?.addEventListener("abort", onClosed, { once: true });
  let harness: Awaited<ReturnType<typeof openHarness>> | undefined;
  try {
    harness = await openHarness(
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
    if (!options.json) {
      io.out(
        p.bold("capgate demo") +
          p.dim(" — a scripted model fixes a broken project through the gate (offline)"),
      );
      io.out(p.dim(`workspace: ${workspace}`));
    }
    const result = await harness.runGoal({
      goal: demo.goal,
      model: demo.model,
      maxSteps: demo.maxSteps,
      signal: stop.signal,
      onEvent: (e: RunEvent) => {
        if (options.json) return printJsonLine(io, e);
        const line = describeEvent(e, p);
        if (line) io.out(line);
      },
    });
    if (outputClosed(io)) return 0;
    if (!options.json) {
      const fixed = demo.fixed();
      io.out("");
      io.out(`${p.bold("trace:")} ${result.tracePath}`);
      io.out(p.dim(`replay it with: capgate trace ${result.runId}`));
      if (!capgateOnPath())
        io.out(
          p.dim(
            `(capgate is not on your PATH: from a checkout run \`pnpm link:cli\`, or meanwhile: node ${process.argv[1] ?? "apps/cli/dist/bin.js"} trace ${result.runId})`,
          ),
        );
      io.out(
        p.dim(
          fixed && result.outcome === "finished"
            ? "math.js now adds; the tests pass."
            : fixed
              ? "math.js was patched, but the run did not finish."
              : "math.js was not fixed.",
        ),
      );
    }
    return exitCodeForOutcome(result.outcome);
  } finally {
    io.closed?.removeEventListener("abort", onClosed);
    await harness?.close();
    if (!options.keep) rmSync(workspace, { recursive: true, force: true });
  }
}
