#!/usr/bin/env node
// `pnpm pack:all [dir]`: pack every PUBLIC workspace package (not bench, not tests/e2e)
// into one folder (default ./packs), with workspace: ranges replaced by real versions as
// pnpm publish would. Prints one line per tarball; the e2e tests install these with npm.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { publicPackageDirs } from "./publish-metadata-lib.mjs";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const out = resolve(process.argv[2] ?? join(root, "packs"));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const dirs = publicPackageDirs(root);
for (const [i, dir] of dirs.entries()) {
  process.stdout.write(`pack ${i + 1}/${dirs.length} ${relative(root, dir)}\n`);
  execFileSync("pnpm", ["pack", "--pack-destination", out, "--config.update-notifier=false"], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
  });
}
console.log(`${readdirSync(out).length} tarballs in ${relative(process.cwd(), out) || "."}`);
