import { HeadTailCapture } from "@capgate/sandbox";
import { truncationMarker } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { fitCaptured, splitBudget } from "./format.js";

function capture(text: string, max: number): { text: string; total: number } {
  const c = new HeadTailCapture(max);
  c.push(new TextEncoder().encode(text));
  return { text: c.result().text, total: c.totalBytes };
}

describe("output budget", () => {
  it("splits the byte budget so a small stream stays whole", () => {
    expect(splitBudget(10, 20, 100)).toEqual([10, 20]);
    expect(splitBudget(1_000, 20, 100)).toEqual([80, 20]);
    expect(splitBudget(20, 1_000, 100)).toEqual([20, 80]);
    expect(splitBudget(1_000, 1_000, 100)).toEqual([50, 50]);
  });

  it("re-cutting an already cut capture keeps one marker with the true count", () => {
    const original = `HEAD${"x".repeat(100_000)}TAIL`;
    const captured = capture(original, 2_000);
    expect(captured.text).toMatch(/bytes truncated/);
    const fitted = fitCaptured(captured.text, captured.total, 500);
    expect(Buffer.byteLength(fitted)).toBeLessThanOrEqual(500);
    expect(fitted.startsWith("HEAD")).toBe(true);
    expect(fitted.endsWith("TAIL")).toBe(true);
    const markers = fitted.match(/…\[(\d+) bytes truncated\]…/g) ?? [];
    expect(markers).toHaveLength(1);
    const omitted = Number(/\[(\d+) bytes/.exec(fitted)![1]);
    const kept = Buffer.byteLength(fitted) - Buffer.byteLength(truncationMarker(omitted));
    expect(omitted + kept).toBe(Buffer.byteLength(original));
  });

  it("cuts on character boundaries and leaves fitting text alone", () => {
    const original = "é".repeat(50_000);
    const captured = capture(original, 3_001);
    const fitted = fitCaptured(captured.text, captured.total, 777);
    expect(fitted).not.toContain("\uFFFD");
    expect(Buffer.byteLength(fitted)).toBeLessThanOrEqual(777);
    expect(fitCaptured("short", 5, 100)).toBe("short");
    // A whole (uncut) capture that is too long gets one ordinary cut, counted right.
    const whole = fitCaptured("a".repeat(1_000), 1_000, 100);
    const omitted = Number(/\[(\d+) bytes/.exec(whole)![1]);
    expect(omitted + Buffer.byteLength(whole) - Buffer.byteLength(truncationMarker(omitted))).toBe(1_000);
  });
});
