import type { RunningServer } from "./start-server.js";

export interface ShutdownOptions {
  /** Signals that stop the server (default SIGTERM and SIGINT). */
  signals?: NodeJS.Signals[];
  /** Ends the process once the server has closed (default process.exit). */
  exit?: (code: number) => void;
  /** Told about a failed close (default: nothing). */
  onError?: (error: unknown) => void;
}

/**
 * Close the server gracefully on SIGTERM/SIGINT (what `capgate serve` installs): stop
 * accepting, abort runs (their traces end with `run_ended { outcome: "aborted" }`), close
 * MCP sessions, the browser and background processes, then exit 0 (1 if closing failed).
 * A second signal while closing exits at once with 130. Returns a function that removes
 * the handlers.
 */
export function closeOnSignals(
  server: Pick<RunningServer, "close">,
  options: ShutdownOptions = {},
): () => void {
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const onSignal = () => {
    if (stopping) {
      exit(130);
      return;
    }
    stopping = true;
    server.close().then(
      () => exit(0),
      (error: unknown) => {
        options.onError?.(error);
        exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
