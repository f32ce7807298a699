import { afterEach, describe, expect, it, vi } from "vitest";

// @types/node 20 does not declare WebAssembly (see grammar-wasm.ts): the part used here.
declare const WebAssembly: {
  compile(bytes: Uint8Array): Promise<object>;
  Module: { new (bytes: Uint8Array): object; customSections(module: object, name: string): ArrayBuffer[] };
};

afterEach(() => {
  vi.doUnmock("node:fs");
  vi.resetModules();
});

describe("the bash grammar's WebAssembly", () => {
  it("compiles once per process, and the parser runs on what was compiled", async () => {
    const { compileBashWasm } = await import("./grammar-wasm.js");
    const first = compileBashWasm();
    expect(compileBashWasm()).toBe(first);
    const { runtime, grammar } = await first;
    expect(runtime).toBeInstanceOf(WebAssembly.Module);
    expect(WebAssembly.Module.customSections(grammar, "dylink.0")).toHaveLength(1);
    const { loadTreeSitterBash } = await import("./shell-syntax.js");
    const tree = (await loadTreeSitterBash()).parse("git status | head");
    expect(tree?.rootNode.hasError).toBe(false);
  });

  it("reports an unreadable file as a rejection, and tries again on the next call", async () => {
    const readFileSync = vi.fn(() => {
      throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    });
    vi.doMock("node:fs", async (original) => ({
      ...(await original<typeof import("node:fs")>()),
      readFileSync,
    }));
    const { compileBashWasm } = await import("./grammar-wasm.js");
    await expect(compileBashWasm()).rejects.toThrow("EACCES");
    const calls = readFileSync.mock.calls.length;
    await expect(compileBashWasm()).rejects.toThrow("EACCES");
    expect(readFileSync.mock.calls.length).toBeGreaterThan(calls);
  });
});
