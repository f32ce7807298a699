#!/usr/bin/env node
// `pnpm link:cli [--prefix DIR]`: put `capgate` on PATH from this checkout — a small shim
// in DIR/bin (default: npm's global prefix, where `npm install -g` puts commands) that runs
// this checkout's apps/cli/dist/bin.js with the node that ran this script. Rebuilds show up
// at once; `pnpm link:cli --remove` takes the shim away again.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const bin = join(root, "apps", "cli", "dist", "bin.js");
const args = process.argv.slice(2);
const at = args.indexOf("--prefix");
const prefix =
  at >= 0 && args[at + 1]
    ? resolve(args[at + 1])
    : execFileSync("npm", ["prefix", "-g", "--no-update-notifier"], { encoding: "utf8" }).trim();
const binDir = process.platform === "win32" ? prefix : join(prefix, "bin");
const shim = join(binDir, "capgate");
const MARK = "# capgate link:cli shim";

if (args.includes("--remove")) {
  if (existsSync(shim) && readFileSync(shim, "utf8").includes(MARK)) {
    rmSync(shim);
    console.log(`removed ${shim}`);
  } else console.log(`no capgate shim at ${shim}`);
  process.exit(0);
}
if (!existsSync(bin)) {
  console.error("error: apps/cli is not built\nhint: run `pnpm build` first");
  process.exit(1);
}
if (existsSync(shim) && !readFileSync(shim, "utf8").includes(MARK)) {
  console.error(`error: ${shim} exists and is not a capgate shim\nhint: remove it, or pass --prefix DIR`);
  process.exit(1);
}
mkdirSync(binDir, { recursive: true });
writeFileSync(
  shim,
  `#!/bin/sh\n${MARK} (${root})\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} "$@"\n`,
);
chmodSync(shim, 0o755);
console.log(`capgate → ${shim}`);
const onPath = (process.env.PATH ?? "").split(delimiter).includes(binDir);
if (!onPath) console.log(`note: ${binDir} is not on your PATH; add it: export PATH="${binDir}:$PATH"`);
