import type { RunEvent } from "@capgate/loop";
import { visibleText } from "@capgate/schema";

/** How a text frontend styles parts of a line (colours on a terminal); each function returns the text to print. */
export interface TextStyle {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
  gray(text: string): string;
}

const same = (text: string) => text;

/** No styling: plain text (logs, chat messages, NO_COLOR). */
export const PLAIN_TEXT: TextStyle = {
  bold: same,
  dim: same,
  red: same,
  green: same,
  yellow: same,
  blue: same,
  cyan: same,
  magenta: same,
  gray: same,
};

/**
 * Text a model, a tool or an MCP server wrote, made safe to print on a terminal: every
 * control and format character but newline and tab is shown escaped (`\u001b`), so nothing
 * can move the cursor, clear the screen, set the title or hide text. It is `visibleText` of
 * `@capgate/schema`, the one escaper every surface uses (approvals included).
 */
export function terminalSafe(text: string): string {
  return visibleText(text);
}

/** A value with every string in it made terminalSafe. */
export function safeStrings<T>(value: T): T {
  if (typeof value === "string") return terminalSafe(value) as T;
  if (Array.isArray(value)) return value.map(safeStrings) as T;
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, safeStrings(v)])) as T;
  return value;
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function args(value: unknown, max = 120): string {
  const text = JSON.stringify(value) ?? "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * One readable line per event (or nothing, for events only a trace needs): what a text
 * frontend shows of a run — `capgate run`, `chat`, `demo` and `trace` print these.
 */
export function describeEvent(event: RunEvent, p: TextStyle = PLAIN_TEXT): string | undefined {
  // Every string an event carries may come from the model, a command or a server.
  const e = safeStrings(event);
  switch (e.type) {
    case "run_started":
      return `${p.bold("▶ run")} ${p.dim(e.runId)} ${p.cyan(e.profile)} ${p.dim(`· ${e.model} · ${e.workspace}`)}\n  ${p.bold("goal:")} ${oneLine(e.goal, 300)}`;
    case "profile_changed":
      return `${p.magenta("↻ profile")} ${e.from} → ${p.bold(e.to)} ${p.dim(`(${e.reason}; loaded ${e.loaded.join(", ") || "nothing"})`)}`;
    case "model_request":
    case "model_response":
      return undefined;
    case "action_rejected":
      return `${p.red("✗ rejected")} ${p.bold(e.code)}${e.property ? p.dim(` at ${e.property}`) : ""}: ${oneLine(e.message)}`;
    case "capability_searched":
      return `${p.blue("? search")} "${e.query}" → ${e.hits.map((h) => h.capability).join(", ") || p.dim("no hits")}`;
    case "capability_loaded":
      return e.ok
        ? `${p.blue("+ load")} ${p.bold(e.name)} ${p.dim(`(${e.signatures.length} tools)`)}`
        : `${p.red("+ load")} ${e.name}: ${oneLine(e.error ?? "failed")}`;
    case "tool_called": {
      // A call a tool made (a script.run's nested calls) is drawn under its enclosing call.
      const nest = e.parent ? `  ${p.dim(`│ ${e.parent.index}.`)} ` : "";
      return `${nest}${p.cyan("→")} ${p.bold(e.tool)} ${p.dim(args(e.arguments))}`;
    }
    case "tool_progress":
      return `  ${p.dim(`… ${progressText(e)}`)}`;
    case "tool_result": {
      const mark = e.rejected ? p.red(`✗ ${e.rejected}`) : e.success ? p.green("✓") : p.yellow("✗");
      const via = e.via === "mcp" ? p.dim(` via mcp:${e.server ?? ""}`) : "";
      const nest = e.parent ? `  ${p.dim("│")}   ` : "";
      return `${nest}  ${mark}${via} ${oneLine(e.summary)} ${p.dim(`${e.durationMs} ms`)}`;
    }
    case "goal_updated": {
      const parts = Object.entries(e.update).map(
        ([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`,
      );
      return `${p.gray("• goal")} ${oneLine(parts.join("; "))}`;
    }
    case "memory_searched":
      return `${p.blue("? memory")} "${e.query}" → ${e.hits.length} hit(s)`;
    case "verified":
      if (e.denied) return `${p.red("✘ verify refused")} ${oneLine(e.denied)}`;
      return e.passed
        ? `${p.green("✔ verify passed")} ${e.claim} ${p.dim(`(${e.command}, exit ${e.exitCode})`)}`
        : `${p.red("✘ verify failed")} ${e.claim} ${p.dim(`(${e.command}, exit ${e.exitCode ?? "none"})`)}${e.outputTail ? `\n    ${p.dim(oneLine(e.outputTail.slice(-300)))}` : ""}`;
    case "finish_refused":
      return `${p.yellow("⚠ finish refused")} ${oneLine(e.reason)}`;
    case "finished":
      return `${p.green(p.bold("✓ finished"))} ${oneLine(e.summary, 400)}`;
    case "marked_impossible":
      return `${p.yellow(p.bold("■ impossible"))} ${oneLine(e.reason, 400)}`;
    case "worker_spawned":
      return `${p.magenta("⇉ worker")} ${e.workerId} (${e.profile}) ${p.dim(e.childRunId)} ${oneLine(e.goal)}`;
    case "approval_requested":
      return `${p.yellow("? approval")} ${e.tool} (${e.risk}) ${p.dim(oneLine(e.description))}`;
    case "approval_resolved": {
      // Who decided, and for how far: `cli`, `api:<owner>`, `grant:<approval id>`, `timeout`, `abort`…
      const by = e.decidedBy ? ` by ${e.decidedBy}` : "";
      if (e.decidedBy?.startsWith("grant:")) return `${p.green("✓ allowed")} ${e.tool ?? "the tool"}${by}`;
      const verdict = e.approved
        ? p.green(e.scope === "run" ? "approved for the rest of the run" : "approved")
        : p.red("denied");
      return `  ${verdict}${by}${e.reason ? p.dim(` (${e.reason})`) : ""}`;
    }
    case "run_ended": {
      const color = e.outcome === "finished" ? p.green : e.outcome === "error" ? p.red : p.yellow;
      const error = e.error ? `: ${oneLine(e.error, 300)}` : "";
      return `${p.bold("■ run ended")} ${color(e.outcome)}${error} ${p.dim(`· ${e.steps} step(s), ${e.rejections} rejected`)}`;
    }
  }
}

/** One progress report as the CLI prints it: `3/6 (50%) message`. */
export function progressText(e: { progress: number; total?: number; message?: string }): string {
  const share =
    e.total !== undefined && e.total > 0
      ? `${e.progress}/${e.total} (${Math.round((100 * e.progress) / e.total)}%)`
      : String(e.progress);
  return `${share}${e.message ? ` ${oneLine(e.message, 200)}` : ""}`;
}
