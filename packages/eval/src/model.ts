import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { exposedToolName } from "@capgate/loop";
import { createModel, createScriptedModel, type ModelClient } from "@capgate/models";
import { CapgateError, parseJsonStrict } from "@capgate/schema";
import type { PlaceholderValues } from "./placeholders.js";
import type { EvalMode } from "./types.js";

/**
 * The model for one run. Any spec capgate accepts works; a fresh client per run keeps runs
 * independent. `scripted:DIR` (a directory) holds replies per task: `DIR/<task>.<mode>.json`,
 * else `DIR/<task>.json` — a gate-mode script, which exposed mode replays with its
 * capability_call actions turned into direct calls and its search/load actions dropped.
 * `scripted:FILE` replays the same file in every run.
 */
export function modelForRun(
  spec: string,
  run: { task: string; mode: EvalMode },
  options: { cwd: string; values?: PlaceholderValues; env?: Record<string, string | undefined> },
): ModelClient {
  const dir = scriptedDirectory(spec, options.cwd);
  if (dir === undefined)
    return createModel(spec, { cwd: options.cwd, ...(options.env ? { env: options.env } : {}) });
  const exact = join(dir, `${run.task}.${run.mode}.json`);
  const shared = join(dir, `${run.task}.json`);
  const file = existsSync(exact) ? exact : shared;
  if (!existsSync(file)) {
    throw new CapgateError(
      "no_scripted_replies",
      `no scripted replies for task ${run.task} in ${dir} (looked for ${run.task}.${run.mode}.json and ${run.task}.json)`,
    );
  }
  let replies = readReplies(file);
  if (file === shared && run.mode === "exposed") replies = replies.flatMap(toExposed);
  if (options.values) replies = replies.map((r) => fillReply(r, options.values!));
  return createScriptedModel(replies, {
    name: file === shared && run.mode === "exposed" ? `${file} (as exposed)` : file,
  });
}

/**
 * A reply's `{{web}}`, `{{workspace}}`, `{{scratch}}`, `{{task}}` and `{{node}}` filled in
 * for this run (a script cannot know the web server's port in advance), escaped for the
 * JSON string they sit in.
 */
function fillReply(reply: string, values: PlaceholderValues): string {
  return reply.replace(
    /\{\{(workspace|task|scratch|web|node)\}\}/g,
    (whole, name: keyof PlaceholderValues) => {
      const value = values[name];
      return value === undefined ? whole : JSON.stringify(value).slice(1, -1);
    },
  );
}

/** The directory of a `scripted:DIR` spec, or undefined for any other spec. */
export function scriptedDirectory(spec: string, cwd: string): string | undefined {
  if (!spec.startsWith("scripted:")) return undefined;
  const path = resolve(cwd, spec.slice("scripted:".length));
  return existsSync(path) && statSync(path).isDirectory() ? path : undefined;
}

function readReplies(file: string): string[] {
  const parsed = parseJsonStrict(readFileSync(file, "utf8"));
  if (!parsed.ok || !Array.isArray(parsed.value))
    throw new CapgateError("scripted_invalid", `${file} is not a JSON array of replies`);
  return parsed.value.map((r, i) => {
    if (typeof r === "string") return r;
    if (r && typeof r === "object" && typeof (r as { text?: unknown }).text === "string")
      return (r as { text: string }).text;
    throw new CapgateError("scripted_invalid", `${file}: reply ${i} is not a string or { "text": … }`, {
      property: `[${i}]`,
    });
  });
}

/** One gate-mode reply as exposed mode would send it (none for search and load). */
function toExposed(reply: string): string[] {
  const parsed = parseJsonStrict(reply);
  const action = parsed.ok
    ? (parsed.value as { name?: unknown; arguments?: Record<string, unknown> })
    : undefined;
  if (!action || typeof action !== "object") return [reply];
  if (action.name === "capability_search" || action.name === "capability_load") return [];
  if (action.name !== "capability_call") return [reply];
  const { tool, arguments: inner, ...rest } = action.arguments ?? {};
  if (typeof tool !== "string") return [reply];
  return [JSON.stringify({ name: exposedToolName(tool, new Set()), arguments: inner ?? rest })];
}
