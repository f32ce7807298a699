import type { RunEvent } from "@capgate/loop";
import { describeEvent } from "../event-text.js";
import { paint, type TerminalIO } from "./io.js";
import type { Spinner } from "./spinner.js";

export interface RunEventPrinting {
  /** Each event as one JSON line on stdout instead of text. */
  json?: boolean;
  /** Spun while the model thinks; stopped before anything else is printed. */
  spinner?: Spinner;
  /** The spinner's text for a model request (default `thinking… step N`). */
  thinking?: (step: number) => string;
  /** Events not printed as text (a chat hides the run's framing; `--quiet` hides all). */
  hide?: (event: RunEvent) => boolean;
  /** Print the lines dim (a chat, whose replies are the main text). */
  dim?: boolean;
}

/**
 * The `onEvent` of a terminal frontend: one line per event (`describeEvent`), a spinner
 * while the model thinks, a run that ended in an error on stderr like every other error;
 * or one JSON object per line.
 */
export function printRunEvents(io: TerminalIO, options: RunEventPrinting = {}): (event: RunEvent) => void {
  const p = paint(io);
  const { spinner } = options;
  return (event) => {
    if (options.json) return io.out(JSON.stringify(event));
    if (event.type === "model_request")
      return spinner?.start(options.thinking?.(event.step) ?? `thinking… step ${event.step}`);
    if (event.type === "model_response") return spinner?.stop();
    if (options.hide?.(event)) return;
    const line = describeEvent(event, p);
    if (!line) return;
    spinner?.stop();
    if (event.type === "run_ended" && event.outcome === "error") io.err(line);
    else io.out(options.dim ? p.dim(line) : line);
  };
}

/**
 * The abort signal of a long command: aborted when stdout's reader goes away, and, unless
 * `signals` is false, on Ctrl-C or SIGTERM after `before()` and printing `message` on
 * stderr. With `force`, a second Ctrl-C exits at once (130). `dispose()` removes the
 * listeners.
 */
export function interruptible(
  io: TerminalIO,
  options: { message?: string; before?: () => void; force?: boolean; signals?: boolean } = {},
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onClosed = () => controller.abort(new Error("the output pipe was closed"));
  io.closed?.addEventListener("abort", onClosed, { once: true });
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    options.before?.();
    if (options.force && interrupts > 1) process.exit(130);
    if (options.message) io.err(paint(io).yellow(options.message));
    controller.abort(new Error("interrupted"));
  };
  const signals = options.signals === false ? [] : (["SIGINT", "SIGTERM"] as const);
  for (const s of signals) process.on(s, onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      io.closed?.removeEventListener("abort", onClosed);
      for (const s of signals) process.off(s, onSignal);
    },
  };
}
