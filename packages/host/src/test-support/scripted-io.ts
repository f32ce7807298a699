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
