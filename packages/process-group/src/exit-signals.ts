import { constants } from "node:os";

/**
 * Every signal whose default action ends the process and that a process can catch (the
 * user's Ctrl-C is SIGINT, Ctrl-\ SIGQUIT). SIGKILL and SIGSTOP cannot be caught; the faults
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE) are left alone: a JavaScript listener for a real fault
 * would return into it and loop. Real-time signals are not listed.
 */
export const FATAL_SIGNALS = [
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGTRAP",
  "SIGABRT",
  "SIGUSR1",
  "SIGUSR2",
  "SIGSTKFLT",
  "SIGALRM",
  "SIGTERM",
  "SIGXCPU",
  "SIGXFSZ",
  "SIGVTALRM",
  "SIGPROF",
  "SIGPOLL",
  "SIGPWR",
  "SIGSYS",
] as const;

export type FatalSignal = (typeof FATAL_SIGNALS)[number];

/**
 * End the process through `process.exit(128 + n)` on every catchable fatal signal, so exit
 * hooks run: the process groups tracked here are killed, and a sandboxed command's
 * after-command steps happen. A frontend calls it once, at start.
 * - `own`: signals the caller handles itself (a command with a shutdown of its own keeps
 *   SIGINT and SIGTERM);
 * - `ignore`: signals that do nothing until the caller listens for them (a server that
 *   reloads its config on SIGHUP: one arriving while it starts is not an end).
 * Signals this platform does not have (SIGPWR on macOS) are skipped.
 */
export function exitOnSignals(
  options: { own?: readonly FatalSignal[]; ignore?: readonly FatalSignal[] } = {},
): void {
  for (const signal of FATAL_SIGNALS) {
    const number = (constants.signals as Record<string, number | undefined>)[signal];
    if (number === undefined || options.own?.includes(signal)) continue;
    if (options.ignore?.includes(signal)) process.on(signal, () => undefined);
    else process.on(signal, () => process.exit(128 + number));
  }
}
