export type { PendingApproval } from "@capgate/loop";
export type { ErrorBody } from "./http-errors.js";
export type { LogLevel, ServerLogOptions } from "./logging.js";
export type { ActiveRun, RunLauncher, RunStatus, StartRunRequest } from "./run-launcher.js";
export type { RunState, RunView } from "./runs-routes.js";
export type { ShutdownOptions } from "./shutdown.js";
export { closeOnSignals } from "./shutdown.js";
export type { RunningServer, ServerTimeouts, StartServerOptions } from "./start-server.js";
export { BODY_LIMIT_BYTES, startServer } from "./start-server.js";
