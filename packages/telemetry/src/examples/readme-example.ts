// The README example (there imported as @capgate/telemetry), kept as a file so the typecheck covers it.
import type { RunEvent } from "@capgate/loop";
import { startTelemetry, telemetrySettings } from "../index.js";

// The config's `telemetry` section and the OTEL_* variables decide; undefined means off
// (and then the OpenTelemetry SDK is never imported).
const settings = telemetrySettings({ enabled: true, endpoint: "http://127.0.0.1:4318" }, process.env);
if (settings) {
  const telemetry = await startTelemetry(settings);
  const at = { runId: "run-1", time: new Date().toISOString() };
  const events: RunEvent[] = [
    {
      ...at,
      seq: 1,
      type: "run_started",
      goal: "g",
      profile: "Coder",
      model: "openai:gpt-4o",
      workspace: "/ws",
      maxSteps: 5,
      mcp: false,
      kind: "goal",
    },
    { ...at, seq: 2, type: "tool_called", step: 1, tool: "fs.read", arguments: { path: "a" }, risk: "read" },
    {
      ...at,
      seq: 3,
      type: "tool_result",
      step: 1,
      tool: "fs.read",
      success: true,
      summary: "…",
      via: "native",
      durationMs: 1,
    },
    { ...at, seq: 4, type: "run_ended", outcome: "finished", steps: 1, rejections: 0 },
  ];
  // A host usually wraps its run store instead: telemetry.traceRunStore(store).
  for (const event of events) telemetry.observe(event);
  await telemetry.shutdown(); // ends open spans and exports what is left
}
