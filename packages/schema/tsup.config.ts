import { defineConfig } from "tsup";

export default defineConfig({
  // The root is runtime-neutral and loads ajv only to compile; "./standalone" generates
  // precompiled validators at build time (Node), "./standalone-runtime" is what they import.
  entry: ["src/index.ts", "src/standalone.ts", "src/standalone-runtime.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
});
