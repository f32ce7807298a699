// SPEC §14.7 — CLI start: `capgate --version` wall time ÷ `node -e 0`, medians in one run.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Figure } from "../figure.js";

export const name = "cli";

const BIN = fileURLToPath(new URL("../../../apps/cli/dist/bin.js", import.meta.url));

function wall(args: string[]): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: "ignore" });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}`);
  return performance.now() - t;
}

export async function run(): Promise<Figure[]> {
  if (!existsSync(BIN)) {
    console.log("cli: apps/cli is not built (pnpm build); not measured");
    return [];
  }
  const cli: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < 3; i++) {
    wall([BIN, "--version"]);
    wall(["-e", "0"]);
  }
  // Interleave so load changes hit both alike.
  for (let i = 0; i < 15; i++) {
    cli.push(wall([BIN, "--version"]));
    bare.push(wall(["-e", "0"]));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  return [
    {
      key: "cli.start_ratio",
      value: Math.round((median(cli) / median(bare)) * 100) / 100,
      target: "capgate --version ÷ node -e 0",
    },
  ];
}
