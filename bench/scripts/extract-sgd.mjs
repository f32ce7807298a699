#!/usr/bin/env node
// Extracts the part of the Schema-Guided Dialogue dataset the search bench uses — each
// split's schema.json and every user turn that starts a new intent — into
// bench/data/sgd/<split>.json.gz, so `pnpm bench` measures the set on a fresh clone.
// Usage: node bench/scripts/extract-sgd.mjs /path/to/dstc8-schema-guided-dialogue
// Source: github.com/google-research-datasets/dstc8-schema-guided-dialogue @ e852981,
// CC BY-SA 4.0 (the extract is under the same licence: bench/data/sgd/LICENSE.md).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

const root = process.argv[2];
if (!root) {
  console.error("usage: extract-sgd.mjs <dstc8-schema-guided-dialogue checkout>");
  process.exit(2);
}
const out = resolve(dirname(new URL(import.meta.url).pathname), "../data/sgd");
mkdirSync(out, { recursive: true });
for (const split of ["test", "dev"]) {
  const dir = join(root, split);
  const services = JSON.parse(readFileSync(join(dir, "schema.json"), "utf8"));
  const files = readdirSync(dir)
    .filter((f) => /^dialogues_\d+\.json$/.test(f))
    .sort();
  const starts = [];
  const seen = new Set();
  for (const file of files) {
    for (const dialogue of JSON.parse(readFileSync(join(dir, file), "utf8"))) {
      const active = new Map();
      for (const turn of dialogue.turns) {
        if (turn.speaker !== "USER") continue;
        for (const frame of turn.frames) {
          const intent = frame.state?.active_intent;
          if (!intent || intent === "NONE" || active.get(frame.service) === intent) continue;
          active.set(frame.service, intent);
          const key = `${turn.utterance}\u0000${frame.service}\u0000${intent}`;
          if (seen.has(key)) continue;
          seen.add(key);
          starts.push([turn.utterance, frame.service, intent]);
        }
      }
    }
  }
  const bundle = {
    source: "https://github.com/google-research-datasets/dstc8-schema-guided-dialogue",
    commit: "e852981",
    licence: "CC BY-SA 4.0",
    split,
    files,
    services,
    starts,
  };
  const file = join(out, `${split}.json.gz`);
  writeFileSync(file, gzipSync(JSON.stringify(bundle), { level: 9 }));
  console.log(
    `${file}: ${services.length} services, ${starts.length} intent starts from ${files.length} files`,
  );
}
