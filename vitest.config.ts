import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineConfig } from "vitest/config";

// Every workspace package folder (one with a package.json) is a project. A folder with its
// own vitest config (apps/cli, tests/e2e) uses that; the others inherit this file's test
// options (`extends: true`) under their package name.
const groups = ["packages", "packages/capabilities", "apps", "tests"];
const folders = [
  ...groups.flatMap((group) =>
    existsSync(group)
      ? readdirSync(group)
          .map((name) => join(group, name))
          .filter((dir) => existsSync(join(dir, "package.json")))
      : [],
  ),
  // examples/ is one package: frontends built on @capgate/host, run by their tests.
  "examples",
];
const hasOwnConfig = (dir: string) =>
  ["ts", "mts", "js", "mjs"].some((ext) => existsSync(join(dir, `vitest.config.${ext}`)));
const packageName = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string }).name;
const projects = folders.map((dir) =>
  hasOwnConfig(dir) ? dir : { extends: true as const, test: { name: packageName(dir), root: resolve(dir) } },
);

export default defineConfig({
  test: {
    // Many tests start real processes (bubblewrap, git, PostgreSQL, Chromium, MCP servers);
    // on a loaded 2-core CI machine vitest's 5 s default fails them for being slow, not
    // wrong. Timings are judged by `pnpm bench`, never by test timeouts.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects,
    reporters: ["default", ["json", { outputFile: "test-results.json" }]],
  },
});
