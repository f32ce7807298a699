import { describe, expect, it } from "vitest";
import { wilson } from "./summary.js";

describe("wilson", () => {
  it("matches the textbook 95 % intervals", () => {
    const half = wilson(5, 10);
    expect(half.low).toBeCloseTo(0.2366, 3);
    expect(half.high).toBeCloseTo(0.7634, 3);
    const none = wilson(0, 10);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 3);
    const all = wilson(24, 24);
    expect(all.high).toBe(1);
    expect(all.low).toBeCloseTo(0.8619, 3);
    expect(wilson(0, 0)).toMatchObject({ rate: 0, low: 0, high: 0 });
  });
});
