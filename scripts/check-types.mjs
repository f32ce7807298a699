#!/usr/bin/env node
// `pnpm check:types`: pack every public package and run arethetypeswrong on each tarball.
// The packages are ESM-only by design, so "a require() resolves to ESM" is not a finding
// (cjs-resolves-to-esm is ignored); anything else — a subpath node10 cannot resolve, types
// that do not match the JavaScript — fails.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const packs = mkdtempSync(join(tmpdir(), "capgate-attw-"));
const attw = join(root, "node_modules", ".bin", "attw");
let failed = 0;
try {
  execFileSync(process.execPath, [join(root, "scripts", "pack-all.mjs"), packs], { stdio: "inherit" });
  for (const tarball of readdirSync(packs).sort()) {
    try {
      execFileSync(
        attw,
        [join(packs, tarball), "--ignore-rules", "cjs-resolves-to-esm", "--format", "ascii"],
        {
          stdio: "pipe",
        },
      );
      console.log(`attw ok   ${tarball}`);
    } catch (error) {
      failed++;
      console.error(`attw FAIL ${tarball}\n${error.stdout ?? ""}${error.stderr ?? ""}`);
    }
  }
} finally {
  rmSync(packs, { recursive: true, force: true });
}
if (failed > 0) process.exit(1);
