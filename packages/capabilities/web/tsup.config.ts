import { defineConfig } from "tsup";

export default defineConfig({
  // "./manifest" is the runtime-neutral part: a frontend can list the tools without loading the handlers.
  entry: ["src/index.ts", "src/manifest.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
});
