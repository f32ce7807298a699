import { createSpinner as nano } from "nanospinner";
import type { TerminalIO } from "./io.js";

export interface Spinner {
  start(text: string): void;
  stop(): void;
}

/** A spinner on stderr while the model thinks — only on a colour terminal, never in --json output. */
export function createSpinner(io: TerminalIO, enabled: boolean): Spinner {
  if (!enabled || !io.color || !process.stderr.isTTY) return { start() {}, stop() {} };
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
