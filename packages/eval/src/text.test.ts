import { describe, expect, it } from "vitest";
import type { RunRecord } from "./results.js";
import { wilson } from "./summary.js";
import { describeEvalProgress, describeModeSummary, describeRunRecord } from "./text.js";

const record = (over: Partial<RunRecord>): RunRecord =>
  ({
    task: "fix-tests",
    mode: "gate",
    repeat: 2,
    tags: [],
    success: true,
    outcome: "finished",
    checks: [],
    ms: 1234,
    steps: 5,
    promptChars: 900,
    promptTokens: null,
    completionTokens: null,
    ...over,
  }) as RunRecord;

describe("eval lines for a terminal", () => {
  it("a run: its mark, task, facts and the first failed check", () => {
    expect(describeRunRecord(record({}))).toBe("✓ fix-tests (gate #2) 5 steps, 900 chars, 1.2 s");
    const failed = record({
      success: false,
      promptTokens: 10,
      completionTokens: 3,
      checks: [
        { passed: true, detail: "ran" },
        { passed: false, detail: "the tests still fail" },
      ] as RunRecord["checks"],
    });
    expect(describeRunRecord(failed)).toBe(
      "✗ fix-tests (gate #2) 5 steps, 900 chars, 10+3 tokens, 1.2 s — the tests still fail",
    );
    expect(describeRunRecord({ ...failed, error: "the model is unreachable" })).toContain(
      "— the model is unreachable",
    );
  });

  it("progress: the plan (saying what is resumed), each finished run, nothing for the rest", () => {
    expect(
      describeEvalProgress({ type: "planned", total: 6, done: 2, modes: ["gate", "exposed"], tasks: 3 }),
    ).toBe("3 tasks × gate, exposed: 6 runs, 2 already done (resuming)");
    expect(describeEvalProgress({ type: "run_finished", record: record({}), done: 3, total: 6 })).toMatch(
      /^\[3\/6\] ✓ fix-tests/,
    );
    expect(describeEvalProgress({ type: "run_started", task: "t", mode: "gate", repeat: 1 })).toBeUndefined();
  });

  it("a mode: successes with the interval, prompt size and steps per run", () => {
    const line = describeModeSummary({
      mode: "gate",
      success: wilson(9, 10),
      meanPromptChars: 1234.4,
      promptTokens: null,
      meanSteps: 4.25,
    } as Parameters<typeof describeModeSummary>[0]);
    expect(line).toMatch(
      /^gate {5}9\/10 succeeded \(90 %, 95 % CI \d+ %–\d+ %\), 1234 prompt chars\/run, 4\.3 steps\/run$/,
    );
  });
});
