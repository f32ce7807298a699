import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// Every workspace package folder (one with a package.json) is a project with vitest's
// defaults, so `vitest run` inside a package runs the same tests as the root run.
const groups = ["packages", "packages/capabilities", "apps", "tests"];
const projects = groups.flatMap((group) =>
  existsSync(group)
    ? readdirSync(group)
        .map((name) => join(group, name))
        .filter((dir) => existsSync(join(dir, "package.json")))
    : [],
);

export default defineConfig({
  test: {
    projects,
    reporters: ["default", ["json", { outputFile: "test-results.json" }]],
  },
});
