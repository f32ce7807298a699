import type { TelemetrySettings } from "./settings.js";
import type { Telemetry } from "./types.js";

/**
 * Start exporting traces. The OpenTelemetry SDK is imported here, on first use, so a host
 * with telemetry off never loads it.
 */
export async function startTelemetry(settings: TelemetrySettings): Promise<Telemetry> {
  const { startSdk } = await import("./sdk.js");
  return startSdk(settings);
}
