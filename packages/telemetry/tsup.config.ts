import { defineConfig } from "tsup";

export default defineConfig({
  // The SDK half (sdk.ts) is a separate chunk, imported only when telemetry is switched on.
  entry: ["src/index.ts"],
  format: ["esm"],
  splitting: true,
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
});
