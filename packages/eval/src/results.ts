import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CapgateError, type JsonSchema, parseJsonStrict, validate } from "@capgate/schema";
import type { CheckOutcome } from "./checks.js";
import type { RunMetrics } from "./metrics.js";
import type { EvalMode } from "./types.js";

/** One finished run: `DIR/results.json` holds one per (task, mode, repeat). */
export interface RunRecord extends Omit<RunMetrics, "outcome"> {
  task: string;
  mode: EvalMode;
  /** 1-based. */
  repeat: number;
  tags: string[];
  /** Every check passed. */
  success: boolean;
  /** How the loop ended, or `not_run` when the run could not start (its `error` says why). */
  outcome: RunMetrics["outcome"] | "not_run";
  checks: CheckOutcome[];
  /** Wall time of the run (model and tools), in milliseconds; fixture set-up and checks excluded. */
  ms: number;
  /** Set when a budget stopped the run. */
  budgetExceeded?: "tokens" | "time";
  error?: string;
  /** The run's trace (JSONL of its events), relative to DIR. */
  trace?: string;
}

/** `DIR/results.json`. */
export interface ResultsFile {
  format: 1;
  /** The model spec as given. */
  model: string;
  suite: { name: string; dir: string };
  distractors: number;
  started: string;
  updated: string;
  runs: RunRecord[];
}

const count = { type: "integer", minimum: 0 } as const;
const tokens = { anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }] } as const;

/** The JSON Schema of `results.json` (documented in docs/evaluation.md). */
export const resultsSchema: JsonSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "capgate eval results",
  type: "object",
  additionalProperties: false,
  required: ["format", "model", "suite", "distractors", "started", "updated", "runs"],
  properties: {
    format: { const: 1 },
    model: { type: "string" },
    suite: {
      type: "object",
      additionalProperties: false,
      required: ["name", "dir"],
      properties: { name: { type: "string" }, dir: { type: "string" } },
    },
    distractors: count,
    started: { type: "string" },
    updated: { type: "string" },
    runs: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: [
          "task",
          "mode",
          "repeat",
          "tags",
          "success",
          "outcome",
          "checks",
          "steps",
          "modelCalls",
          "rejections",
          "toolCalls",
          "distractorCalls",
          "promptChars",
          "firstPromptChars",
          "promptTokens",
          "completionTokens",
          "ms",
        ],
        properties: {
          task: { type: "string" },
          mode: { enum: ["gate", "exposed", "code"] },
          repeat: { type: "integer", minimum: 1 },
          tags: { type: "array", items: { type: "string" } },
          success: { type: "boolean" },
          outcome: { enum: ["finished", "impossible", "step_limit", "aborted", "error", "not_run"] },
          checks: {
            type: "array",
            items: {
              type: "object",
              additionalProperties: false,
              required: ["check", "passed"],
              properties: {
                check: { type: "string" },
                passed: { type: "boolean" },
                detail: { type: "string" },
              },
            },
          },
          steps: count,
          modelCalls: count,
          rejections: count,
          toolCalls: count,
          distractorCalls: count,
          promptChars: count,
          firstPromptChars: count,
          promptTokens: tokens,
          completionTokens: tokens,
          ms: { type: "number", minimum: 0 },
          budgetExceeded: { enum: ["tokens", "time"] },
          error: { type: "string" },
          trace: { type: "string" },
        },
      },
    },
  },
} as unknown as JsonSchema;

export const RESULTS_FILE = "results.json";

export function runKey(r: { task: string; mode: string; repeat: number }): string {
  return `${r.task}\u0000${r.mode}\u0000${r.repeat}`;
}

/** The results already in DIR (resume), or undefined when there are none. */
export function readResults(dir: string): ResultsFile | undefined {
  const file = join(dir, RESULTS_FILE);
  if (!existsSync(file)) return undefined;
  const parsed = parseJsonStrict(readFileSync(file, "utf8"));
  if (!parsed.ok) {
    throw new CapgateError(
      "invalid_results",
      `${file} is not valid JSON (line ${parsed.line}, column ${parsed.column}): move it away or choose another --out.`,
    );
  }
  const checked = validate(resultsSchema, parsed.value);
  if (!checked.ok) {
    const first = checked.errors[0];
    throw new CapgateError(
      "invalid_results",
      `${file} is not a capgate eval results file (${first?.property || "root"}: ${first?.message}): move it away or choose another --out.`,
    );
  }
  return parsed.value as ResultsFile;
}

/** Write results.json whole, through a temporary file: a crash mid-write leaves the previous version. */
export function writeResults(dir: string, results: ResultsFile): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, RESULTS_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(results, null, 2)}\n`);
  renameSync(tmp, file);
}
