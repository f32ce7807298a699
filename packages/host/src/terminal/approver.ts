import type { ApprovalDecision, LoopApprovalHook } from "@capgate/loop";
import { approvalText } from "@capgate/schema";
import { terminalSafe } from "../event-text.js";
import { paint, type TerminalIO } from "./io.js";

/** The most of a request's arguments an approval prompt prints before it says how much it left out. */
const SHOWN_ARGUMENT_CHARS = 4000;

/**
 * A request's arguments as one line for the terminal: JSON, with every control and format
 * character escaped (nothing the model wrote can move the cursor or hide text), and a cut
 * that says how much it left out.
 * @deprecated Nothing in capgate uses it any more: show `approvalText` of `@capgate/schema`
 * (every argument on its own line, cut per argument), the rendering every approval surface
 * shares. Kept for one minor version for code that imported it.
 */
export function shownArguments(args: unknown): string {
  // JSON text holds no raw newline or tab, so every control and format character is escaped.
  const text = terminalSafe(JSON.stringify(args) ?? "undefined");
  if (text.length <= SHOWN_ARGUMENT_CHARS) return text;
  const rest = text.length - SHOWN_ARGUMENT_CHARS;
  return `${text.slice(0, SHOWN_ARGUMENT_CHARS)} [… ${rest} more characters not shown: answer n unless you have read them another way]`;
}

/**
 * A terminal frontend's approver: asks on a terminal — y (this call), n, or, where there is a run or chat
 * session to reach (`offerRun`), a: allow this tool for the rest of it. With no terminal to
 * answer, a required approval is denied with a message saying why.
 */
export function terminalApprover(
  io: TerminalIO,
  beforeAsk?: () => void,
  afterAsk?: () => void,
  offerRun = true,
): LoopApprovalHook {
  const p = paint(io);
  return async (request, signal): Promise<ApprovalDecision> => {
    if (!io.interactive || !io.prompt) {
      io.err(
        `${p.yellow("approval required")} for ${request.tool} (${request.risk}) — denied: no terminal to ask on. Run interactively or use --approval never.`,
      );
      return { approved: false, decidedBy: "cli" };
    }
    beforeAsk?.();
    try {
      // "Always" only where it can hold: a run to reach, and a question of the approval mode
      // (a configured rule's question is asked every time).
      const runScope = offerRun && request.grantable === true;
      const choices = runScope ? "[y/N/a = always for this run]" : "[y/N]";
      // What the answer binds (its hash) is the whole arguments: they are shown, one a line,
      // escaped and cut per argument, as every approval surface shows them.
      for (const line of approvalText(request).split("\n")) io.err(`  ${line}`);
      let answer: string;
      try {
        answer = (
          await io.prompt(
            `${p.yellow("?")} allow ${p.bold(terminalSafe(request.tool))} (${terminalSafe(request.risk)}) ${choices} `,
            signal,
          )
        ).trim();
      } catch (error) {
        // The call was stopped while the question was open (its script's deadline, the
        // run's abort): the question is withdrawn and the call is not allowed.
        if (!signal?.aborted) throw error;
        io.err(`  ${p.dim("(withdrawn: the call was stopped before an answer; not allowed)")}`);
        return { approved: false, decidedBy: "cli" };
      }
      if (runScope && /^a(lways)?$/i.test(answer)) return { approved: true, scope: "run", decidedBy: "cli" };
      return { approved: /^y(es)?$/i.test(answer), decidedBy: "cli" };
    } finally {
      afterAsk?.();
    }
  };
}
