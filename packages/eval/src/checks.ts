import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { RunEvent } from "@capgate/loop";
import { fillPlaceholders, type PlaceholderValues } from "./placeholders.js";
import type { Task, TaskCheck } from "./types.js";

export interface CheckOutcome {
  /** The check, in one line (`command: node {{task}}/check.mjs`, `file: out.txt equals …`). */
  check: string;
  passed: boolean;
  /** Why it failed (or the command's output tail). */
  detail?: string;
}

export interface CheckContext {
  workspace: string;
  values: PlaceholderValues;
  /** The run's events, for `toolCall` checks (empty when nothing ran). */
  events: readonly RunEvent[];
  signal?: AbortSignal;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;
const TAIL = 600;

/**
 * Judge the final state: every check of the task, in order (all of them, so a report
 * shows each one). The model's own claims never count — only files, commands and the
 * trace of what was actually called.
 */
export async function runChecks(task: Task, ctx: CheckContext): Promise<CheckOutcome[]> {
  const out: CheckOutcome[] = [];
  for (const check of task.check) out.push(await runCheck(check, task, ctx));
  return out;
}

async function runCheck(check: TaskCheck, task: Task, ctx: CheckContext): Promise<CheckOutcome> {
  if ("command" in check) {
    const command = fillPlaceholders(check.command, ctx.values, task.file);
    const r = await runCommand(command, ctx.workspace, check.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, ctx);
    const label = `command: ${check.command}`;
    return r.code === 0
      ? { check: label, passed: true }
      : {
          check: label,
          passed: false,
          detail: `${r.timedOut ? "timed out" : `exit ${r.code ?? r.signal}`}${r.output ? `: ${r.output}` : ""}`,
        };
  }
  if ("file" in check) return fileCheck(check, ctx.workspace);
  return toolCallCheck(check, ctx.events);
}

function fileCheck(check: Extract<TaskCheck, { file: string }>, workspace: string): CheckOutcome {
  const path = resolve(workspace, check.file);
  const parts: string[] = [];
  if (check.equals !== undefined) parts.push(`equals ${JSON.stringify(clip(check.equals, 60))}`);
  if (check.contains !== undefined) parts.push(`contains ${JSON.stringify(check.contains)}`);
  if (check.matches !== undefined) parts.push(`matches /${check.matches}/`);
  const wantsContent = parts.length > 0;
  const exists = check.exists ?? true;
  if (!exists) parts.push("does not exist");
  const label = `file: ${check.file}${parts.length > 0 ? ` ${parts.join(", ")}` : " exists"}`;
  const present = existsSync(path);
  if (!exists)
    return present
      ? { check: label, passed: false, detail: "the file exists" }
      : { check: label, passed: true };
  if (!present) return { check: label, passed: false, detail: "the file does not exist" };
  if (!wantsContent) return { check: label, passed: true };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return { check: label, passed: false, detail: `cannot read it: ${(error as Error).message}` };
  }
  if (check.equals !== undefined && text !== check.equals)
    return { check: label, passed: false, detail: `it holds ${JSON.stringify(clip(text, 200))}` };
  const needles = check.contains === undefined ? [] : [check.contains].flat();
  const missing = needles.filter((n) => !text.includes(n));
  if (missing.length > 0)
    return {
      check: label,
      passed: false,
      detail: `missing ${missing.map((m) => JSON.stringify(m)).join(", ")}`,
    };
  if (check.matches !== undefined && !new RegExp(check.matches).test(text))
    return { check: label, passed: false, detail: `no match in ${JSON.stringify(clip(text, 200))}` };
  return { check: label, passed: true };
}

function toolCallCheck(
  check: Extract<TaskCheck, { toolCall: string }>,
  events: readonly RunEvent[],
): CheckOutcome {
  const wantSuccess = check.success ?? true;
  const label = `toolCall: ${check.toolCall}${check.arguments ? ` with ${JSON.stringify(check.arguments)}` : ""}${wantSuccess ? "" : " (any outcome)"}`;
  let calls = 0;
  for (const e of events) {
    if (e.type !== "tool_called" || e.tool !== check.toolCall) continue;
    calls++;
    if (check.arguments && !containsArguments(e.arguments, check.arguments)) continue;
    if (!wantSuccess) return { check: label, passed: true };
    const result = events.find(
      (r) => r.type === "tool_result" && r.step === e.step && r.tool === e.tool && r.seq > e.seq,
    );
    if (result?.type === "tool_result" && result.success && !result.rejected)
      return { check: label, passed: true };
  }
  return {
    check: label,
    passed: false,
    detail:
      calls === 0
        ? `${check.toolCall} was never called`
        : `${check.toolCall} was called ${calls} time(s), never ${check.arguments ? "with these arguments" : ""}${check.arguments && wantSuccess ? " and " : ""}${wantSuccess ? "successfully" : ""}`.trim(),
  };
}

/** Every expected property equals the actual one (deeply); others may be anything. */
function containsArguments(actual: unknown, expected: Record<string, unknown>): boolean {
  if (!actual || typeof actual !== "object") return false;
  const got = actual as Record<string, unknown>;
  return Object.entries(expected).every(([k, v]) => Object.hasOwn(got, k) && isDeepStrictEqual(got[k], v));
}

function runCommand(
  command: string,
  cwd: string,
  timeoutMs: number,
  ctx: CheckContext,
): Promise<{ code: number | null; signal: string | null; output: string; timedOut: boolean }> {
  return new Promise((done) => {
    // The checker is the task author's code, not the model's: it runs as written, without the
    // gate's shell policy, in its own process group so a timeout ends everything it started.
    const child = spawn("bash", ["-c", command], {
      cwd,
      env: { ...checkerEnv(), EVAL_WORKSPACE: ctx.workspace, EVAL_TASK_DIR: ctx.values.task },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-4 * TAIL);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    ctx.signal?.addEventListener("abort", kill, { once: true });
    child.on("error", (error) => {
      output += error.message;
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      ctx.signal?.removeEventListener("abort", kill);
      done({ code, signal, output: output.trim().slice(-TAIL), timedOut });
    });
  });
}

/** The checker's environment: the machine's, without capgate's own settings. */
function checkerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("CAPGATE_")) env[k] = v;
  return env;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
