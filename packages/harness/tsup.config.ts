import { defineConfig } from "tsup";

export default defineConfig({
  // The config's precompiled validator stays a file of its own: config.ts requires it only
  // when a config file is checked.
  entry: { index: "src/index.ts", "generated/config-validator": "src/generated/config-validator.js" },
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
});
