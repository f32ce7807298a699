import { describe, expect, it } from "vitest";
import { LazyAbortController } from "./lazy-abort.js";

describe("LazyAbortController", () => {
  it("a signal read before abort() aborts with the reason", () => {
    const c = new LazyAbortController();
    const signal = c.signal;
    const seen: unknown[] = [];
    signal.addEventListener("abort", () => seen.push(signal.reason));
    const reason = new Error("client went away");
    c.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(seen).toEqual([reason]);
    expect(c.aborted).toBe(true);
    expect(c.reason).toBe(reason);
  });

  it("a signal read after abort() starts aborted with the same reason", () => {
    const c = new LazyAbortController();
    const reason = new Error("timeout");
    c.abort(reason);
    expect(c.signal.aborted).toBe(true);
    expect(c.signal.reason).toBe(reason);
    expect(c.signal).toBe(c.signal);
  });

  it("abort() without a reason gives an AbortError, and only the first abort counts", () => {
    const c = new LazyAbortController();
    c.abort();
    c.abort(new Error("second"));
    expect((c.reason as DOMException).name).toBe("AbortError");
    expect(c.signal.reason).toBe(c.reason);
  });

  it("onAbort listeners run once, can be removed, and run at once when already aborted", () => {
    const c = new LazyAbortController();
    const calls: string[] = [];
    c.onAbort(() => calls.push("a"));
    const off = c.onAbort(() => calls.push("b"));
    off();
    c.abort();
    c.abort();
    c.onAbort(() => calls.push("late"));
    expect(calls).toEqual(["a", "late"]);
  });
});
