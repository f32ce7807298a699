export type {
  /** @deprecated import it from `@capgate/host`; this re-export goes in the next minor version. */
  ActiveRun,
  /** @deprecated import it from `@capgate/host`; this re-export goes in the next minor version. */
  RunLauncher,
  /** @deprecated import it from `@capgate/host`; this re-export goes in the next minor version. */
  RunState,
  /** @deprecated import it from `@capgate/host`; this re-export goes in the next minor version. */
  RunStatus,
  /** @deprecated import it from `@capgate/host`; this re-export goes in the next minor version. */
  RunView,
  /** @deprecated import it from `@capgate/host`; this re-export goes in the next minor version. */
  StartRunRequest,
} from "@capgate/host";
export type { PendingApproval } from "@capgate/loop";
export type { ServerTimeouts } from "./http-app.js";
export { BODY_LIMIT_BYTES } from "./http-app.js";
export type { ErrorBody } from "./http-errors.js";
export type { LogLevel, ServerLogOptions } from "./logging.js";
export type { ShutdownOptions } from "./shutdown.js";
export { closeOnSignals } from "./shutdown.js";
export type { RunningServer, StartServerOptions } from "./start-server.js";
export { startServer } from "./start-server.js";
