import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeEvent, encodeEvent, escapeText, findUnstorableText, unescapeText } from "./event-codec.js";
import type { RunEvent } from "./events.js";

// Strings of arbitrary UTF-16 code units, with the troublesome ones (NUL, the escape
// character, both surrogate halves, a pair, a backslash-u that looks like an escape) drawn often.
const unit = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.constantFrom("\u0000", "\uE000", "\uD800", "\uDBFF", "\uDC00", "\uDFFF") },
  { weight: 1, arbitrary: fc.constantFrom("😀", "\\", "u", "0", "e", "a", "\uE000" + "0000") },
);
const anyText = fc.string({ unit, maxLength: 40 });
const storable = (s: string) => !s.includes("\u0000") && findUnstorableText(s) === undefined;

const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    anyText,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(anyText, fc.constant("__proto__")), tie("value"), { maxKeys: 4 }),
  ),
})).value;

const anyEvent = fc
  .record({
    text: anyText,
    summary: anyText,
    structuredContent: jsonValue,
  })
  .map(
    ({ text, summary, structuredContent }) =>
      ({
        type: "tool_result",
        runId: "r-1",
        seq: 3,
        time: "2026-12-01T00:00:00.000Z",
        step: 1,
        tool: "shell.run",
        success: true,
        summary,
        via: "native",
        durationMs: 1,
        content: [{ type: "text", text }],
        structuredContent,
      }) as unknown as RunEvent,
  );

describe("the run store codec", () => {
  it("escapeText round-trips every string and leaves nothing PostgreSQL or UTF-8 refuses", () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const escaped = escapeText(s);
        expect(unescapeText(escaped)).toBe(s);
        expect(storable(escaped)).toBe(true);
        // Round-trips through UTF-8 bytes too (what a file or a socket carries).
        expect(Buffer.from(escaped, "utf8").toString("utf8")).toBe(escaped);
      }),
      { numRuns: 500 },
    );
  });

  it("leaves text without U+0000, unpaired surrogates or U+E000 unchanged", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 60 }).filter((s) => !s.includes("\uE000")),
        (s) => {
          expect(escapeText(s)).toBe(s);
          expect(unescapeText(s)).toBe(s);
        },
      ),
    );
    expect(escapeText("x\u0000y")).toBe("x\uE0000000y");
    expect(escapeText("a\uD800b\uDC00")).toBe("a\uE000d800b\uE000dc00");
    expect(escapeText("\uD83D\uDE00")).toBe("😀");
    expect(escapeText("\uE000")).toBe("\uE000e000");
  });

  it("an event read back equals the event emitted, strings and keys at any depth (property)", () => {
    fc.assert(
      fc.property(anyEvent, (event) => {
        const text = encodeEvent(event);
        const parsed = JSON.parse(text) as unknown;
        // What a store holds: no string anywhere (keys included) that PostgreSQL would refuse.
        expect(findUnstorableText(parsed)).toBeUndefined();
        expect(text.includes("\\u0000")).toBe(false);
        const back = decodeEvent(parsed);
        expect(JSON.stringify(back)).toBe(JSON.stringify(event));
        // `__proto__` stays a plain own key, never a prototype.
        expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
      }),
      { numRuns: 300 },
    );
  });

  it("an event that needs no escaping is stored as its own JSON, with no marker", () => {
    const event = {
      type: "finished",
      runId: "r",
      seq: 2,
      time: "t",
      step: 1,
      summary: "ok \\u0000 literally",
    } as RunEvent;
    // A literal backslash-u0000 is text, not a NUL: it may take the escaping path but reads back the same.
    expect(decodeEvent(JSON.parse(encodeEvent(event)))).toEqual(event);
    const plain = { ...event, summary: "done 😀" } as RunEvent;
    expect(encodeEvent(plain)).toBe(JSON.stringify(plain));
    expect(JSON.parse(encodeEvent({ ...event, summary: "x\u0000" } as RunEvent)).$escaped).toBe(true);
  });

  it("names the first property holding text no store can hold", () => {
    expect(findUnstorableText({ goal: "ok", profile: "Coder" })).toBeUndefined();
    expect(findUnstorableText({ goal: "a\u0000b" })).toEqual({
      property: "goal",
      problem: "it contains U+0000 (a NUL character) at index 1",
    });
    expect(findUnstorableText({ tags: ["x", "\uDC00"] })?.property).toBe("tags[1]");
    expect(findUnstorableText({ args: { "k\u0000": 1 } })?.property).toBe("args.k\u0000");
  });
});
