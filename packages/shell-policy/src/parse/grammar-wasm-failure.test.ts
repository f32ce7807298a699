import { describe, expect, it, vi } from "vitest";

// @types/node 20 does not declare WebAssembly (see grammar-wasm.ts): the part used here.
declare const WebAssembly: {
  compile(bytes: Uint8Array): Promise<object>;
  Module: { new (bytes: Uint8Array): object; customSections(module: object, name: string): ArrayBuffer[] };
};

// A file of its own: web-tree-sitter's runtime initialises once per process, so this must be
// the process's first load.

// One WebAssembly module that imports what emscripten never provides: instantiating it fails.
const UNLINKABLE = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version
  0x01,
  0x04,
  0x01,
  0x60,
  0x00,
  0x00, // type section: () -> ()
  0x02,
  0x0a,
  0x01,
  0x04,
  0x6e,
  0x6f,
  0x70,
  0x65,
  0x01,
  0x66,
  0x00,
  0x00, // import "nope" "f"
]);

vi.mock("./grammar-wasm.js", async (original) => {
  const real = await original<typeof import("./grammar-wasm.js")>();
  return {
    ...real,
    compileBashWasm: async () => ({
      runtime: await WebAssembly.compile(UNLINKABLE),
      grammar: (await real.compileBashWasm()).grammar,
    }),
  };
});

describe("the bash parser's runtime", () => {
  it("a runtime that cannot be instantiated fails the load instead of leaving it waiting", async () => {
    const { loadTreeSitterBash } = await import("./shell-syntax.js");
    await expect(loadTreeSitterBash()).rejects.toThrow(/nope/);
  });
});
