import { defineConfig } from "tsup";

export default defineConfig({
  // Two entries: the runtime-neutral root and the Node-only stdio subpath.
  entry: ["src/index.ts", "src/stdio.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
});
