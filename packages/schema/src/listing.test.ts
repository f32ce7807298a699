import { describe, expect, it } from "vitest";
import { fitListing } from "./listing.js";

const tools = (n: number, prefix = "srv/tool_") =>
  Array.from({ length: n }, (_, i) => `  ${prefix}${i}(city: string, days?: integer)`);

describe("fitListing", () => {
  it("shows everything when it fits, with no more-line", () => {
    const r = fitListing([{ head: ["Loaded fs:"], items: tools(3), more: (n) => `… ${n} more` }], {
      budget: 1000,
    });
    expect(r).toEqual({ text: ["Loaded fs:", ...tools(3)].join("\n"), shown: 3, omitted: 0 });
  });

  it("keeps 10,000 items within the budget, most relevant first, ending with the count and how to see more", () => {
    const r = fitListing(
      [
        {
          head: ["Loaded srv (10000 tools):"],
          items: tools(10_000),
          more: (n) => `  … and ${n} more; search for them`,
        },
      ],
      { budget: 2_000 },
    );
    expect(r.text.length).toBeLessThanOrEqual(2_000);
    expect(r.shown + r.omitted).toBe(10_000);
    expect(r.text.startsWith(`Loaded srv (10000 tools):\n${tools(1)[0]}\n`)).toBe(true);
    expect(r.text.endsWith(`  … and ${r.omitted} more; search for them`)).toBe(true);
    expect(r.text.split("\n")).toHaveLength(r.shown + 2);
  });

  it("shares the budget round-robin: every section shows its best items", () => {
    const sections = ["a", "b", "c"].map((name) => ({
      head: [`${name}:`],
      items: tools(1_000, `${name}/t`),
      more: (n: number) => `  (${n} more of ${name})`,
    }));
    const r = fitListing(sections, { budget: 1_500 });
    expect(r.text.length).toBeLessThanOrEqual(1_500);
    for (const name of ["a", "b", "c"]) {
      expect(r.text).toContain(`${name}/t0(`);
      expect(r.text).toMatch(new RegExp(`\\(\\d+ more of ${name}\\)`));
    }
  });

  it("cuts long lines and, when even the headings do not fit, the text itself", () => {
    const long = fitListing(
      [{ head: ["x".repeat(5_000)], items: ["y".repeat(5_000)], more: (n) => `${n} more` }],
      {
        budget: 500,
        maxLine: 300,
      },
    );
    expect(long.text.split("\n")[0]).toBe(`${"x".repeat(299)}…`);
    expect(long.omitted).toBe(1);
    const heads = fitListing(
      Array.from({ length: 50 }, () => ({ head: ["h".repeat(300)], items: [], more: () => "" })),
      { budget: 1_000 },
    );
    expect(heads.text.length).toBeLessThanOrEqual(1_000);
    expect(heads.text.endsWith("…[listing cut to fit]")).toBe(true);
  });

  it("never splits a surrogate pair when cutting", () => {
    const r = fitListing([{ head: [`${"a".repeat(28)}😀😀`], items: [], more: () => "" }], {
      budget: 100,
      maxLine: 30,
    });
    expect(r.text).toBe(`${"a".repeat(28)}…`);
  });
});
