import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The grammar's file name: the build copies it from tree-sitter-bash into dist/, beside the code. */
const GRAMMAR_WASM = "tree-sitter-bash.wasm";

/**
 * Where the grammar is: next to this module once built (the published package carries only
 * the .wasm, not tree-sitter-bash's 20 MB of sources and prebuilds); when running from
 * src/ (tests, scripts), in the tree-sitter-bash devDependency.
 */
function grammarFile(): string {
  const beside = fileURLToPath(new URL(GRAMMAR_WASM, import.meta.url));
  if (existsSync(beside)) return beside;
  const require = createRequire(import.meta.url);
  try {
    return join(dirname(require.resolve("tree-sitter-bash/package.json")), GRAMMAR_WASM);
  } catch {
    throw new Error(
      `the bash grammar ${GRAMMAR_WASM} is missing: expected ${beside} (a broken install of @capgate/shell-policy; reinstall it)`,
    );
  }
}

/**
 * The part of the WebAssembly API used here: @types/node 20 does not declare it, and lib
 * "dom" would bring the rest of the browser with it.
 */
export declare namespace Wasm {
  // biome-ignore lint/suspicious/noEmptyInterface: opaque engine objects
  interface Module {}
  // biome-ignore lint/suspicious/noEmptyInterface: opaque engine objects
  interface Instance {}
  type Imports = Record<string, Record<string, unknown>>;
}
const wasmApi = (
  globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<Wasm.Module>;
      instantiate(module: Wasm.Module, imports: Wasm.Imports): Promise<Wasm.Instance>;
    };
  }
).WebAssembly;

/** Instantiate a compiled module (web-tree-sitter's runtime) with the imports emscripten gives. */
export const instantiateWasm = (module: Wasm.Module, imports: Wasm.Imports): Promise<Wasm.Instance> =>
  wasmApi.instantiate(module, imports);

/** The two WebAssembly modules the bash parser runs on, compiled. */
export interface BashWasm {
  /** web-tree-sitter's runtime (the parser itself). */
  readonly runtime: Wasm.Module;
  /** The tree-sitter-bash grammar, a side module the runtime links. */
  readonly grammar: Wasm.Module;
}

let compiled: Promise<BashWasm> | undefined;

/** web-tree-sitter's own .wasm, from the web-tree-sitter package. */
const runtimeFile = (): string =>
  createRequire(import.meta.url).resolve("web-tree-sitter/web-tree-sitter.wasm");

/** Read now, compile in the background; a missing file is a rejected promise, not a throw. */
function compileFile(path: () => string): Promise<Wasm.Module> {
  try {
    return wasmApi.compile(readFileSync(path()));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Start compiling web-tree-sitter's runtime and the bash grammar, once per process (again
 * after a failure). The files are read synchronously so that `WebAssembly.compile` starts
 * now: V8 compiles on its background threads while this thread goes on (the Claude Code
 * hook imports the policy's code meanwhile). Whether function bodies compile now or on
 * first call is the process's V8 setting (`--wasm-lazy-compilation`), not this package's.
 */
export function compileBashWasm(): Promise<BashWasm> {
  if (!compiled) {
    const both = Promise.all([compileFile(runtimeFile), compileFile(grammarFile)]).then(
      ([runtime, grammar]): BashWasm => ({ runtime, grammar }),
    );
    both.catch(() => {
      if (compiled === both) compiled = undefined;
    });
    compiled = both;
  }
  return compiled;
}
