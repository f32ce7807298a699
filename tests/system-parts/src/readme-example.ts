import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ReadmeExampleOptions {
  /** The package's `src` folder (a test's `import.meta.dirname`); its README is one level up. */
  srcDir: string;
  /** The package name the example imports (a subpath too); pointed at the package's source (`entry`). */
  packageName: string;
  /** The source file that import stands for, relative to `srcDir` (default `./index.js`; a subpath's own entry). */
  entry?: string;
  /** The heading the example's first ```ts block follows (default "## Example"). */
  section?: string;
}

let examples = 0;

/**
 * Runs a package README's example as written, its package import pointed at the source,
 * and returns the arguments of every `console.log` it made, in order. A README example run
 * this way cannot rot: the test compares what it printed with what its `// →` comments say.
 */
export async function runReadmeExample(options: ReadmeExampleOptions): Promise<unknown[][]> {
  const readme = readFileSync(join(options.srcDir, "..", "README.md"), "utf8");
  const heading = options.section ?? "## Example";
  const at = readme.indexOf(heading);
  if (at < 0) throw new Error(`README.md has no "${heading}" section`);
  const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))?.[1];
  if (code === undefined) throw new Error(`README.md's "${heading}" section has no \`\`\`ts block`);
  const from = `from "${options.packageName}"`;
  if (!code.includes(from)) throw new Error(`the example does not import ${options.packageName}`);
  // A name of its own per run: a second example of the same package must not be the module already imported.
  const file = join(options.srcDir, `.readme-example-${process.pid}-${++examples}.ts`);
  writeFileSync(file, `${code.replaceAll(from, `from "${options.entry ?? "./index.js"}"`)}\nexport {};\n`);
  const printed: unknown[][] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => {
    printed.push(args);
  };
  try {
    await import(/* @vite-ignore */ file);
  } finally {
    console.log = log;
    rmSync(file, { force: true });
  }
  return printed;
}
