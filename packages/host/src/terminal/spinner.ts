import { createRequire } from "node:module";
import type { createSpinner as Nano } from "nanospinner";
import type { TerminalIO } from "./io.js";

export interface Spinner {
  start(text: string): void;
  stop(): void;
}

/** A spinner on stderr while the model thinks — only on a colour terminal, never in --json output. */
export function createSpinner(io: TerminalIO, enabled: boolean): Spinner {
  if (!enabled || !io.color || !process.stderr.isTTY) return { start() {}, stop() {} };
  // Loaded only for a terminal that shows it (a CommonJS package, so `require` is safe under any loader).
  const nano = (createRequire(import.meta.url)("nanospinner") as { createSpinner: typeof Nano })
    .createSpinner;
  let current: ReturnType<typeof nano> | undefined;
  return {
    start(text) {
      current?.clear();
      current = nano(text, { stream: process.stderr }).start();
    },
    stop() {
      if (!current) return;
      current.clear();
      current.stop();
      current = undefined;
    },
  };
}
