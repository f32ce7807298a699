import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

/**
 * What is wrong with a capability package's `./manifest` subpath, for its tests ([] when
 * nothing is): hosts register the manifest from there and import the handlers only on the
 * first call, so the built file the package.json export names must export `manifest` alone,
 * equal to the package's manifest, and `src/manifest.ts` may import nothing at run time.
 * `testFile` is the calling test's `import.meta.url` (in the package's `src/`); the package
 * is built before its tests run.
 */
export async function manifestSubpathProblems(testFile: string, manifest: unknown): Promise<string[]> {
  const problems: string[] = [];
  const pkg = JSON.parse(readFileSync(new URL("../package.json", testFile), "utf8")) as {
    exports?: Record<string, { import?: string } | string>;
  };
  const entry = pkg.exports?.["./manifest"];
  const file = typeof entry === "string" ? entry : entry?.import;
  if (!file) return ['package.json has no "./manifest" export'];
  const sub = (await import(new URL(`../${file}`, testFile).href)) as Record<string, unknown>;
  if (!isDeepStrictEqual(Object.keys(sub), ["manifest"]))
    problems.push(`${file} exports ${Object.keys(sub).join(", ") || "nothing"}, not the manifest alone`);
  if (!isDeepStrictEqual(sub.manifest, manifest))
    problems.push(`${file}'s manifest differs from src/manifest.ts's`);
  const source = readFileSync(new URL("./manifest.ts", testFile), "utf8");
  const runtimeImport = source.match(/^import (?!type ).*$/m);
  if (runtimeImport) problems.push(`src/manifest.ts imports at run time: ${runtimeImport[0]}`);
  return problems;
}
