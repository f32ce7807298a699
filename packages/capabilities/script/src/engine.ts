import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import * as released from "@jitl/quickjs-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";

// The package's types describe its CommonJS build; imported as ESM, the variant is the default export.
const variant = ((released as { default?: unknown }).default ?? released) as QuickJSSyncVariant;

/** The WebAssembly API of the runtime (Node's types leave the global undeclared). */
type CompiledWasm = object;
type WasmMemory = { readonly buffer: ArrayBuffer };
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<CompiledWasm>;
      Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
    };
  }
).WebAssembly;

/**
 * QuickJS instances (one WebAssembly instance each: its own linear memory, its own heap).
 * The WebAssembly code is compiled once per process (by the host, which hands the compiled
 * module to each engine thread); an instance serves one script at a time, and goes back to the pool only when its script ended cleanly and its memory stayed
 * small. An instance whose script overflowed the host stack inside the engine (deep
 * native recursion: JSON of a 100,000-deep array) or ran out of memory may be left half-way
 * through its own C code, so it is thrown away, never reused.
 *
 * The memory limit is the instance's WebAssembly memory maximum: the engine cannot grow
 * past it whatever its own accounting says (QuickJS's malloc limit does not see every
 * allocation in this build: measured, a 64 MiB limit let the heap reach 514 MiB).
 */
const POOL_SIZE = 1;
/** An instance whose linear memory grew past this goes away after its script (memory never shrinks). */
const POOL_MEMORY_BYTES = 32 * 1024 * 1024;
export const PAGE_BYTES = 65536;
/** What the engine's code, data and stack take before any script runs (its initial memory). */
export const ENGINE_BASE_BYTES = 16 * 1024 * 1024;

let compiled: Promise<CompiledWasm> | undefined;
let provided: CompiledWasm | undefined;
/** Idle instances by their memory maximum (pages). */
const idle = new Map<number, QuickJSWASMModule[]>();

/** Use a module compiled elsewhere (an engine thread gets the host's). */
export function provideCompiledModule(module: CompiledWasm): void {
  provided = module;
}

/** The engine's WebAssembly code, compiled once per process. */
export function compiledModule(): Promise<CompiledWasm> {
  if (provided) return Promise.resolve(provided);
  compiled ??= (async () => {
    const path = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
    return wasm.compile(await readFile(path));
  })();
  // A failed compile (a missing file) is not cached: the next script tries again and says why.
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}

/** Memory maximum in pages for a limit in bytes (the engine's own base included, at least). */
function pagesFor(memoryBytes: number): number {
  return Math.ceil(Math.max(memoryBytes, ENGINE_BASE_BYTES + PAGE_BYTES) / PAGE_BYTES);
}

export interface Engine {
  module: QuickJSWASMModule;
  pages: number;
}

/** An engine instance for one script whose whole memory stays under `memoryBytes`: from the pool, else a new one. */
export async function acquireEngine(memoryBytes: number): Promise<Engine> {
  const pages = pagesFor(memoryBytes);
  const ready = idle.get(pages)?.pop();
  if (ready) return { module: ready, pages };
  const variantWithMemory = newVariant(variant, {
    wasmModule: compiledModule as never,
    wasmMemory: (() => new wasm.Memory({ initial: ENGINE_BASE_BYTES / PAGE_BYTES, maximum: pages })) as never,
  });
  return { module: await newQuickJSWASMModuleFromVariant(variantWithMemory), pages };
}

/** Give an instance back after its script: pooled when `clean` and still small, else dropped. */
export function releaseEngine(engine: Engine, clean: boolean): void {
  const list = idle.get(engine.pages) ?? [];
  if (!clean || list.length >= POOL_SIZE) return;
  let bytes: number;
  try {
    bytes = engine.module.getWasmMemory().buffer.byteLength;
  } catch {
    return;
  }
  if (bytes > POOL_MEMORY_BYTES) return;
  list.push(engine.module);
  idle.set(engine.pages, list);
}
