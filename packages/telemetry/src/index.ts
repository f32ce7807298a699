// Opt-in OpenTelemetry traces for capgate. The root is light: settings are plain code and
// the SDK is imported by startTelemetry only, so a host with telemetry off pays nothing.
export type { DirectCallApproval, DirectCallOutcome, DirectToolCall } from "./direct-calls.js";
export type { TelemetryConfig, TelemetryProtocol, TelemetrySettings } from "./settings.js";
export { telemetrySettings } from "./settings.js";
export { startTelemetry } from "./telemetry.js";
export type { Telemetry } from "./types.js";
