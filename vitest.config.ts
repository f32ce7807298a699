import { defineConfig } from "vitest/config";

// One root run over every workspace package; each package folder is a project with
// vitest's defaults, so `vitest run` inside a package runs the same tests.
export default defineConfig({
  test: {
    projects: ["packages/*", "packages/capabilities/*", "apps/*", "tests/*"],
    reporters: ["default", ["json", { outputFile: "test-results.json" }]],
  },
});
