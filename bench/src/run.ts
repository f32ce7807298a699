import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchModule, Figure } from "./figure.js";

/**
 * `pnpm bench [name...]`: run every module in src/benches/ (or those named), print one line
 * per figure and merge the numbers into bench/results.json (one flat object), so running
 * one module keeps the figures of the others.
 */
const here = dirname(fileURLToPath(import.meta.url));
const benchesDir = join(here, "benches");
const resultsPath = join(here, "..", "results.json");

function isBenchModule(value: unknown): value is BenchModule {
  const m = value as Partial<BenchModule> | null;
  return typeof m === "object" && m !== null && typeof m.name === "string" && typeof m.run === "function";
}

function format(value: number): string {
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  return abs >= 100 ? value.toFixed(1) : abs >= 1 ? value.toFixed(3) : value.toPrecision(3);
}

function readResults(): Record<string, number> {
  if (!existsSync(resultsPath)) return {};
  try {
    const parsed = JSON.parse(readFileSync(resultsPath, "utf8")) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === "number"),
    );
  } catch {
    console.warn(`bench: ${resultsPath} is not valid JSON; starting a new one`);
    return {};
  }
}

async function main(): Promise<void> {
  const filter = process.argv.slice(2).filter((a) => a !== "--");
  const files = readdirSync(benchesDir)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts"))
    .sort();
  const modules: BenchModule[] = [];
  for (const file of files) {
    const stem = basename(file, ".ts");
    let mod: unknown;
    try {
      mod = await import(pathToFileURL(join(benchesDir, file)).href);
    } catch (error) {
      // One broken module must not stop the others; it fails the run only if it was asked for.
      if (filter.length === 0 || filter.includes(stem)) {
        console.error(
          `bench: ${file} failed to load: ${error instanceof Error ? error.message : String(error)}`,
        );
        process.exitCode = 1;
      }
      continue;
    }
    if (!isBenchModule(mod)) {
      console.warn(`bench: ${file} does not export \`name\` and \`run\`; skipped`);
      continue;
    }
    if (filter.length === 0 || filter.includes(mod.name) || filter.includes(stem)) {
      modules.push(mod);
    }
  }
  if (modules.length === 0) {
    console.error(`bench: no module matches ${filter.join(", ")}`);
    process.exitCode = 1;
    return;
  }

  const measured: Record<string, number> = {};
  for (const mod of modules) {
    console.log(`# ${mod.name}`);
    let figures: Figure[];
    try {
      figures = await mod.run();
    } catch (error) {
      console.error(
        `${mod.name}: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      process.exitCode = 1;
      continue;
    }
    for (const f of figures) {
      if (!Number.isFinite(f.value)) {
        console.warn(`${f.key}: not a finite number (${f.value}); not recorded`);
        continue;
      }
      console.log(`${f.key}: ${format(f.value)}${f.target ? ` (${f.target})` : ""}`);
      measured[f.key] = f.value;
    }
  }

  const merged = { ...readResults(), ...measured };
  const sorted = Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((k) => [k, merged[k]]),
  );
  writeFileSync(resultsPath, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`# wrote ${Object.keys(measured).length} figure(s) to bench/results.json`);
}

await main();
