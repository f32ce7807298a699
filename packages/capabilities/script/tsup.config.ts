import { defineConfig } from "tsup";

export default defineConfig({
  // engine-thread.ts is the script engine thread's own entry (engine-threads.ts starts it by path).
  // "./manifest" is the runtime-neutral part: a frontend can list the tools without loading the handlers.
  entry: ["src/index.ts", "src/manifest.ts", "src/engine-thread.ts"],
  // Each entry whole (the manifest is in both): a host that imports only the manifest
  // reads one file, not a shared chunk besides it.
  splitting: false,
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
});
