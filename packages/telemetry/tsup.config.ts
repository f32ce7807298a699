import { defineConfig } from "tsup";

export default defineConfig({
  // The SDK half (sdk.ts) is a separate chunk, imported only when telemetry is switched on;
  // export-worker.ts is the export thread's own entry (off-thread.ts loads it by path).
  entry: ["src/index.ts", "src/export-worker.ts"],
  format: ["esm"],
  splitting: true,
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
});
