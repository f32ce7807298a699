import { parseJsonStrict, type ToolManifest, truncateMiddle } from "@capgate/schema";
import {
  type Capability,
  defineCapability,
  InvalidArgumentsError,
  PolicyDeniedError,
  type ToolCallService,
  type ToolContext,
  type ToolResult,
} from "@capgate/tools";
import { toolDeclarations } from "./declarations.js";
import { DEFAULT_SCRIPT_LIMITS, type ScriptLimits } from "./limits.js";
import { manifest } from "./manifest.js";
import { runScript, type ScriptOutcome } from "./run-script.js";

export interface ScriptCapabilityOptions {
  /** Limits of every script (each defaults to DEFAULT_SCRIPT_LIMITS). */
  limits?: Partial<ScriptLimits>;
}

/** The script capability with the host's own limits. */
export function createScriptCapability(options: ScriptCapabilityOptions = {}): Capability {
  const limits: ScriptLimits = { ...DEFAULT_SCRIPT_LIMITS, ...options.limits };
  return defineCapability({
    manifest,
    handlers: {
      run: async (args, ctx) => {
        const calls = callService(ctx);
        const timeoutMs = scriptTimeout(args.timeout_ms, limits, ctx);
        if (Buffer.byteLength(args.source, "utf8") > limits.sourceBytes)
          throw new InvalidArgumentsError(
            `The script is longer than ${limits.sourceBytes} bytes; split the work into several scripts.`,
            { property: "arguments.source" },
          );
        const outcome = await runScript({
          source: args.source,
          timeoutMs,
          limits: { ...limits, outputBytes: Math.min(limits.outputBytes, ctx.limits.outputBytes) },
          signal: ctx.signal,
          call: (tool, toolArgs, callOptions) => calls.call(tool, toolArgs, callOptions),
          ...(ctx.pauseTimeout ? { pauseTimeout: ctx.pauseTimeout } : {}),
          owner: ctx.resources,
        });
        return scriptResult(outcome, Math.min(limits.outputBytes, ctx.limits.outputBytes), limits);
      },
      types: async (args, ctx) => {
        const loaded = callService(ctx).tools();
        const wanted = args.tools;
        const chosen = wanted ? loaded.filter((tool) => wanted.some((w) => selects(w, tool))) : loaded;
        const missing = wanted?.filter((w) => !loaded.some((tool) => selects(w, tool))) ?? [];
        const note =
          missing.length > 0
            ? `// Not loaded (load them with capability_load first): ${missing.join(", ")}\n`
            : "";
        const usable = chosen.filter((t) => t.name !== "script.run" && t.name !== "script.types");
        return {
          success: missing.length === 0 || usable.length > 0,
          summary: `${note}${toolDeclarations(usable)}`,
          data: { tools: usable.map((t) => t.name), missing },
        };
      },
    },
  });
}

/** The script capability with DEFAULT_SCRIPT_LIMITS. */
export const capability: Capability = createScriptCapability();

function callService(ctx: ToolContext): ToolCallService {
  const calls = ctx.services.calls;
  if (!calls)
    throw new Error(
      "scripts are not available in this host: it provides no tool-call service (ctx.services.calls)",
    );
  // A script inside a script would multiply every limit; the outer script can make the calls itself.
  if (calls.depth > 1)
    throw new PolicyDeniedError(
      "script.run cannot run inside a script: call the tools directly from the outer script.",
    );
  return calls;
}

function scriptTimeout(asked: number | undefined, limits: ScriptLimits, ctx: ToolContext): number {
  const max = Math.min(limits.maxTimeoutMs, ctx.limits.timeoutMs);
  if (asked === undefined) return Math.min(limits.defaultTimeoutMs, max);
  if (asked > max)
    throw new InvalidArgumentsError(
      `timeout_ms ${asked} is over this host's maximum of ${max} ms for a script; ask for ${max} or less.`,
      { property: "arguments.timeout_ms" },
    );
  return asked;
}

/** `fs` selects fs.*; `fs.read` selects itself; `mcp:github` selects github/*. */
function selects(wanted: string, tool: ToolManifest): boolean {
  if (wanted === tool.name) return true;
  if (wanted.startsWith("mcp:")) return tool.name.startsWith(`${wanted.slice(4)}/`);
  return tool.name.startsWith(`${wanted}.`);
}

/** Room kept for the header line and the notes about what was cut. */
const NOTES_BYTES = 600;

function scriptResult(outcome: ScriptOutcome, outputBytes: number, limits: ScriptLimits): ToolResult {
  const stats = `${outcome.calls} tool call${outcome.calls === 1 ? "" : "s"}, ${outcome.durationMs} ms`;
  // The value and the console share the output limit: the value gets half when there are console lines.
  const room = Math.max(1024, outputBytes - NOTES_BYTES);
  const hasLogs = outcome.logs.length > 0;
  const lines: string[] = [];
  let used = 0;
  const failure = outcome.failure;
  if (failure) {
    const where = failure.line !== undefined ? ` at line ${failure.line}, column ${failure.column}` : "";
    const gate = failure.code
      ? ` [${failure.code}${failure.property ? ` at \`${failure.property}\`` : ""}${failure.tool ? ` from ${failure.tool}` : ""}]`
      : "";
    const head = truncateMiddle(
      `script failed${where} (${stats}): ${failure.message}${gate}`,
      hasLogs ? room / 2 : room,
    );
    lines.push(head.text);
    used += Buffer.byteLength(head.text, "utf8");
  } else if (outcome.value === undefined) {
    lines.push(`script finished without a return value (${stats}).`);
  } else {
    const bytes = Buffer.byteLength(outcome.value, "utf8");
    const shown = truncateMiddle(outcome.value, hasLogs ? Math.floor(room / 2) : room);
    lines.push(`script returned (${stats}):`, shown.text);
    used += Buffer.byteLength(shown.text, "utf8");
    if (shown.truncated)
      lines.push(
        `(the returned value is ${bytes} bytes, over the output limit; it was cut in the middle — return less, e.g. counts, a summary or a slice)`,
      );
  }
  if (hasLogs || outcome.droppedLogLines > 0) {
    let left = room - used;
    const kept: string[] = [];
    for (const line of outcome.logs) {
      const bytes = Buffer.byteLength(line, "utf8") + 1;
      if (bytes > left) break;
      left -= bytes;
      kept.push(line);
    }
    const dropped = outcome.droppedLogLines + outcome.logs.length - kept.length;
    const total = outcome.logs.length + outcome.droppedLogLines;
    lines.push(`console (${total} line${total === 1 ? "" : "s"}):`, ...kept);
    if (dropped > 0)
      lines.push(`(${dropped} more console lines dropped: over the ${outputBytes}-byte output limit)`);
  }
  const value = returnedValue(outcome.value, limits);
  return {
    success: failure === undefined,
    summary: lines.join("\n"),
    data: {
      ...(value !== undefined ? { value } : {}),
      // A value too large for data is in the summary only, cut in the middle.
      ...(value === undefined && outcome.value !== undefined
        ? {
            valueOmitted: `the returned value is ${Buffer.byteLength(outcome.value, "utf8")} bytes, over the ${DATA_VALUE_BYTES} bytes given whole here`,
          }
        : {}),
      logs: outcome.logs,
      calls: outcome.calls,
      durationMs: outcome.durationMs,
      ...(failure ? { failure } : {}),
    },
  };
}

/**
 * Largest returned value given whole in the result's `data` (for `--json` and `/tools/call`
 * callers; the model reads the summary, cut to the output limit).
 */
const DATA_VALUE_BYTES = 1024 * 1024;

function returnedValue(text: string | undefined, limits: ScriptLimits): unknown {
  if (text === undefined || Buffer.byteLength(text, "utf8") > Math.min(limits.valueBytes, DATA_VALUE_BYTES))
    return undefined;
  // The strict reader: a returned `__proto__` key must not become a prototype in a host that copies the value.
  const parsed = parseJsonStrict(text, { maxDepth: limits.valueDepth });
  return parsed.ok ? parsed.value : undefined;
}
