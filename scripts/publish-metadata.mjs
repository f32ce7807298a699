#!/usr/bin/env node
// Keeps the npm-facing parts of every public package in step (run after adding a package):
// repository/homepage/bugs/license fields, a copy of the root LICENSE, and README links to
// docs/ made absolute (../../docs/x.md is a broken link on npmjs.com). `--check` only
// reports what is out of step (exit 1), for CI.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

import { publicPackageDirs, REPOSITORY } from "./publish-metadata-lib.mjs";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const check = process.argv.includes("--check");
const problems = [];
const license = readFileSync(join(root, "LICENSE"), "utf8");
for (const dir of publicPackageDirs(root)) {
  const rel = relative(root, dir);
  const file = join(dir, "package.json");
  const text = readFileSync(file, "utf8");
  const pkg = JSON.parse(text);
  const want = {
    license: "MIT",
    repository: { type: "git", url: `git+${REPOSITORY}.git`, directory: rel },
    homepage: `${REPOSITORY}/tree/main/${rel}#readme`,
    bugs: { url: `${REPOSITORY}/issues` },
  };
  const next = { ...pkg };
  for (const [k, v] of Object.entries(want)) next[k] = v;
  // Keep the order readable: metadata right after description.
  const ordered = {};
  for (const [k, v] of Object.entries(next)) {
    if (k in want && k !== "license") continue;
    ordered[k] = v;
    if (k === "license")
      Object.assign(ordered, { repository: want.repository, homepage: want.homepage, bugs: want.bugs });
  }
  const out = `${JSON.stringify(ordered, null, 2)}\n`;
  if (out !== text) {
    if (check) problems.push(`${rel}/package.json: repository/homepage/bugs/license out of step`);
    else writeFileSync(file, out);
  }
  const licenseFile = join(dir, "LICENSE");
  if (!existsSync(licenseFile) || readFileSync(licenseFile, "utf8") !== license) {
    if (check) problems.push(`${rel}/LICENSE: missing or not the root LICENSE`);
    else copyFileSync(join(root, "LICENSE"), licenseFile);
  }
  const readme = join(dir, "README.md");
  if (existsSync(readme)) {
    const md = readFileSync(readme, "utf8");
    const fixed = md.replace(/\]\((?:\.\.\/)+(docs\/[^)]+)\)/g, `](${REPOSITORY}/blob/main/$1)`);
    if (fixed !== md) {
      if (check) problems.push(`${rel}/README.md: relative links to docs/ (broken on npm)`);
      else writeFileSync(readme, fixed);
    }
  } else problems.push(`${rel}: no README.md`);
}
if (problems.length > 0) {
  console.error(`publish metadata: ${problems.length} problem(s)`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
console.log(
  `publish metadata: ${check ? "ok" : "written"} (${publicPackageDirs(root).length} public packages)`,
);
