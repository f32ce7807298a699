// Process groups that end with their host, and the mark that finds a sandbox's processes
// wherever they were re-parented. Node-only (signals, /proc).

export { exitOnSignals, FATAL_SIGNALS, type FatalSignal } from "./exit-signals.js";
export {
  DEFAULT_KILL_GRACE_MS,
  groupAlive,
  groupMembers,
  killMarkedProcesses,
  SANDBOX_MARK_VAR,
  signalGroup,
  terminateGroup,
  trackGroup,
  untrackGroup,
} from "./process-group.js";
