import pc from "picocolors";
import { createOutput, type Output } from "./output.js";

/** Where a terminal frontend writes, and whether it may use colour. Tests pass their own. */
export interface TerminalIO {
  out: (text: string) => void;
  err: (text: string) => void;
  color: boolean;
  /** stdin/stdout are a terminal someone can answer on. */
  interactive: boolean;
  /** Read one line from the user (interactive only); an aborted `signal` withdraws the question (rejects). */
  prompt?: (question: string, signal?: AbortSignal) => Promise<string>;
  /**
   * Aborted when stdout's reader went away (`capgate … | head -1`): long commands stop
   * their work, clean up and exit 0. Writes after that are dropped.
   */
  closed?: AbortSignal;
}

let stdout: Output | undefined;
let stderr: Output | undefined;

/** The process's streams, EPIPE-safe (see output.ts). */
export function processIO(): TerminalIO {
  stdout ??= createOutput(process.stdout);
  stderr ??= createOutput(process.stderr);
  const color = !process.env.NO_COLOR && process.stdout.isTTY === true && process.env.TERM !== "dumb";
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
  return {
    out: stdout.line,
    err: stderr.line,
    color,
    interactive,
    closed: stdout.closed,
    prompt: interactive
      ? async (question, signal) => {
          const { createInterface } = await import("node:readline/promises");
          const rl = createInterface({ input: process.stdin, output: process.stdout });
          try {
            return await rl.question(question, signal ? { signal } : {});
          } finally {
            rl.close();
          }
        }
      : undefined,
  };
}

/** Whether stdout's reader has gone away. */
export function outputClosed(io: TerminalIO): boolean {
  return io.closed?.aborted === true;
}

/** Colour helpers that become identity functions when colour is off (NO_COLOR, pipes). */
export function paint(io: TerminalIO) {
  const on = io.color;
  const wrap = (f: (s: string) => string) => (s: string) => (on ? f(s) : s);
  return {
    bold: wrap(pc.bold),
    dim: wrap(pc.dim),
    red: wrap(pc.red),
    green: wrap(pc.green),
    yellow: wrap(pc.yellow),
    blue: wrap(pc.blue),
    cyan: wrap(pc.cyan),
    magenta: wrap(pc.magenta),
    gray: wrap(pc.gray),
  };
}

export type Paint = ReturnType<typeof paint>;
