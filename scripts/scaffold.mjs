// One-off scaffold for package skeletons (kept for adding new capability packages).
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const [, , dir, name, description] = process.argv;
if (!dir || !name) {
  console.error("usage: node scripts/scaffold.mjs <dir> <package-name> <description>");
  process.exit(2);
}
const abs = join(root, dir);
mkdirSync(join(abs, "src"), { recursive: true });
const depth = dir.split("/").length;
const up = "../".repeat(depth);
const pkg = {
  name,
  version: "0.1.0",
  description,
  type: "module",
  license: "MIT",
  sideEffects: false,
  exports: {
    ".": { types: "./dist/index.d.ts", import: "./dist/index.js" },
    "./package.json": "./package.json",
  },
  main: "./dist/index.js",
  types: "./dist/index.d.ts",
  files: ["dist"],
  engines: { node: ">=20.19" },
  scripts: {
    build: "tsup",
    typecheck: "tsc --noEmit",
  },
};
if (!existsSync(join(abs, "package.json")))
  writeFileSync(join(abs, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
if (!existsSync(join(abs, "tsconfig.json")))
  writeFileSync(
    join(abs, "tsconfig.json"),
    `${JSON.stringify({ extends: `${up}tsconfig.base.json`, include: ["src"] }, null, 2)}\n`,
  );
if (!existsSync(join(abs, "tsup.config.ts")))
  writeFileSync(
    join(abs, "tsup.config.ts"),
    `import { defineConfig } from "tsup";\n\nexport default defineConfig({\n  entry: ["src/index.ts"],\n  format: ["esm"],\n  dts: true,\n  clean: true,\n  target: "node20",\n  sourcemap: true,\n});\n`,
  );
if (!existsSync(join(abs, "src/index.ts"))) writeFileSync(join(abs, "src/index.ts"), "export {};\n");
if (!existsSync(join(abs, "README.md")))
  writeFileSync(join(abs, "README.md"), `# ${name}\n\n${description}\n`);
console.log("scaffolded", dir);
