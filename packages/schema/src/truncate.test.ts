import { describe, expect, it } from "vitest";
import { truncateBytes, truncateMiddle } from "./truncate.js";

describe("truncateMiddle", () => {
  it("leaves short text alone", () => {
    expect(truncateMiddle("hello", 100)).toEqual({ text: "hello", truncated: false, omittedBytes: 0 });
  });
  it("keeps head and tail within the byte budget and marks the cut", () => {
    const text = `HEAD${"x".repeat(100_000)}TAIL`;
    const r = truncateMiddle(text, 500);
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(500);
    expect(r.text.startsWith("HEAD")).toBe(true);
    expect(r.text.endsWith("TAIL")).toBe(true);
    expect(r.text).toContain("bytes truncated");
  });
  it("never splits a multi-byte character", () => {
    for (const ch of ["é", "€", "😀"]) {
      for (let max = 60; max < 90; max++) {
        const r = truncateMiddle(ch.repeat(1000), max);
        expect(r.text.includes("\uFFFD")).toBe(false);
        expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(max);
      }
    }
  });
  it("truncates raw bytes the same way", () => {
    const bytes = new TextEncoder().encode("😀".repeat(10_000));
    const r = truncateBytes(bytes, 200);
    expect(r.text.includes("\uFFFD")).toBe(false);
    expect(r.omittedBytes).toBeGreaterThan(39_000);
  });
});

// The case of the copy that @capgate/mcp-client carried (its render now uses this one).
describe("truncateMiddle on multi-byte text (as MCP results render it)", () => {
  it("keeps head and tail within the byte cap and never splits a character", () => {
    const text = `start ${"€".repeat(10_000)} end`;
    const cut = truncateMiddle(text, 1000);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(1000);
    expect(cut.text.startsWith("start ")).toBe(true);
    expect(cut.text.endsWith(" end")).toBe(true);
    expect(cut.text).not.toContain("\uFFFD");
    expect(truncateMiddle("short", 1000)).toEqual({ text: "short", truncated: false, omittedBytes: 0 });
  });
});
