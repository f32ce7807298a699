// Shared by publish-metadata.mjs and pack-all.mjs.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** The one place the project's public home is written down. */
export const REPOSITORY = "https://github.com/capgate/capgate";

const GROUPS = ["packages", "packages/capabilities", "apps"];

/** Directories of the workspace packages that are published (not `private`). */
export function publicPackageDirs(root) {
  const dirs = [];
  for (const g of GROUPS) {
    for (const entry of readdirSync(join(root, g))) {
      const dir = join(root, g, entry);
      if (!statSync(dir).isDirectory() || !existsSync(join(dir, "package.json"))) continue;
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (!pkg.private) dirs.push(dir);
    }
  }
  return dirs;
}
