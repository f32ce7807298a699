import { copyFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { defineConfig } from "tsup";

// The grammar ships as its .wasm alone (1.3 MB), with its licence beside it: tree-sitter-bash
// itself (20 MB of C sources and native prebuilds) is only a devDependency. Provenance and
// the version pin: docs/decisions.md, "shell-policy: the package and its grammar".
const grammar = dirname(createRequire(import.meta.url).resolve("tree-sitter-bash/package.json"));

export default defineConfig({
  // Two entries: the policy, and the Claude Code hook, which loads the policy only when a Bash
  // call is to be checked (its cold start is on every tool call of Claude Code).
  entry: ["src/index.ts", "src/claude-code.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
  sourcemap: true,
  onSuccess: async () => {
    copyFileSync(join(grammar, "tree-sitter-bash.wasm"), "dist/tree-sitter-bash.wasm");
    copyFileSync(join(grammar, "LICENSE"), "dist/tree-sitter-bash.LICENSE");
  },
});
