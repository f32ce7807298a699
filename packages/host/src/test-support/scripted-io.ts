import type { TerminalIO } from "../terminal/io.js";

/** A terminal whose person answers `answers` in turn: what was asked, and what went to stderr. */
export function scriptedIO(answers: string[]): TerminalIO & { asked: string[]; errors: string[] } {
  const asked: string[] = [];
  const errors: string[] = [];
  return {
    out: () => {},
    err: (t) => errors.push(t),
    color: false,
    interactive: true,
    prompt: async (question) => {
      asked.push(question);
      const next = answers.shift();
      if (next === undefined) throw new Error(`unexpected question: ${question}`);
      return next;
    },
    asked,
    errors,
  };
}

/** A non-interactive terminal that records what went to stdout and stderr (`closed`: stdout's reader going away). */
export function recordingIO(closed?: AbortSignal): { io: TerminalIO; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const io: TerminalIO = {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    color: false,
    interactive: false,
    ...(closed ? { closed } : {}),
  };
  return { io, out, err };
}
