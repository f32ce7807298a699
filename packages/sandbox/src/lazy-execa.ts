import { createRequire } from "node:module";
import type { execa as Execa } from "execa";

const requireHere = createRequire(import.meta.url);
let loaded: typeof Execa | undefined;

/**
 * execa, loaded the first time a program is started. It is about a hundred modules, and
 * most capgate processes (`capgate call fs.read`, the Claude Code hook, a search) never
 * start one. The asynchronous starts load it with `import()` first (`loadExeca`), which
 * every loader handles (tsx, bundlers, plain Node). A synchronous first start
 * (`BackgroundProcesses.start` called directly) falls back to `require`, which Node ≥ 20.19
 * and ≥ 22.12 allow for an ES module, so that it can still return the pid at once.
 */
export async function loadExeca(): Promise<void> {
  loaded ??= (await import("execa")).execa;
}

export const execa = ((...args: unknown[]) => {
  loaded ??= (requireHere("execa") as { execa: typeof Execa }).execa;
  return (loaded as (...a: unknown[]) => unknown)(...args);
}) as typeof Execa;
