#!/usr/bin/env node
// `pnpm demo`: build what the CLI needs, saying what it is doing (a first build takes a
// couple of minutes and turbo's own output is one banner), then run `capgate demo`.
import { spawn, spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" };
const turbo = join(root, "node_modules", ".bin", "turbo");

console.log(
  "capgate demo: building the packages (a first build takes about two minutes; later ones are cached)…",
);
const started = Date.now();
const build = spawn(turbo, ["run", "build", "--filter=capgate...", "--output-logs=hash-only"], {
  cwd: root,
  env,
  stdio: ["ignore", "pipe", "inherit"],
});
let done = 0;
let buffered = "";
build.stdout.on("data", (chunk) => {
  buffered += chunk;
  const lines = buffered.split("\n");
  buffered = lines.pop() ?? "";
  for (const line of lines) {
    // turbo prints "<pkg>:build: cache hit/miss …" per task: one progress line each.
    const task = /^(\S+):build: cache (hit|miss|bypass)/.exec(line.trim());
    if (task) {
      done++;
      const what = task[2] === "hit" ? "up to date" : "building";
      console.log(`  [${String(done).padStart(2)}] ${task[1]} ${what}`);
    } else if (/error|failed/i.test(line)) console.log(line);
  }
});
const code = await new Promise((r) => build.on("close", r));
if (code !== 0) {
  console.error(`capgate demo: the build failed (exit ${code}); run \`pnpm build\` to see why`);
  process.exit(typeof code === "number" ? code : 1);
}
console.log(`capgate demo: built in ${Math.round((Date.now() - started) / 1000)} s\n`);
const demo = spawnSync(
  process.execPath,
  [join(root, "apps", "cli", "dist", "bin.js"), "demo", ...process.argv.slice(2)],
  {
    stdio: "inherit",
    env,
  },
);
process.exit(demo.status ?? 1);
