import { stat } from "node:fs/promises";
import {
  type BackgroundOutput,
  type BackgroundProcessInfo,
  backgroundProcesses,
  runShell,
  sandboxTarget,
  shellPolicyCheck,
} from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import { checkShellCommand } from "@capgate/shell-policy";
import { defineCapability, type PolicyVerdict, type ToolContext, type ToolResult } from "@capgate/tools";
import {
  realWorkspace,
  resolveInWorkspace,
  toWorkspaceRelative,
  workspacePathPolicy,
} from "@capgate/workspace";
import { clipCommand, formatRun, keepTail } from "./format.js";
import { manifest } from "./manifest.js";

/** shell.run's timeout when the call names none (the manifest's documented default). */
export const DEFAULT_RUN_TIMEOUT_MS = 120_000;
/** shell.output's line count when the call names none. */
export const DEFAULT_TAIL_LINES = 100;

const confineCwd = workspacePathPolicy("cwd");

/**
 * `cwd` escaping the workspace is a `policy_denied` rejection; other problems with it (a
 * parent that is a file) are left to the handler, which reports them as a failed call.
 */
async function cwdPolicy(args: { cwd?: string }, ctx: ToolContext): Promise<undefined> {
  try {
    await confineCwd(args, ctx);
  } catch (error) {
    if (CapgateError.isInstance(error) && error.code !== "policy_denied") return undefined;
    throw error;
  }
  return undefined;
}

/**
 * run and start: `cwd` must stay in the workspace, and the command line must pass the shell
 * policy (GUI openers and unresolvable commands denied, configured deny/ask rules). Both run
 * before approval, so a denied command is a `policy_denied` rejection and an ask rule makes
 * the executor ask the host's approver before anything runs.
 */
async function commandPolicy(
  args: { command: string; cwd?: string },
  ctx: ToolContext,
): Promise<PolicyVerdict | undefined> {
  await cwdPolicy(args, ctx);
  return shellPolicyCheck(args.command, ctx, { check: checkShellCommand });
}

/** The real working directory for `cwd` (default: the workspace root), which must be a directory. */
async function workingDirectory(ctx: ToolContext, cwd: string | undefined): Promise<[string, string]> {
  const real = await resolveInWorkspace(ctx, cwd ?? ".", { property: "cwd" });
  if (!(await stat(real)).isDirectory()) {
    throw new CapgateError("not_a_directory", `cwd ${JSON.stringify(cwd)} is a file, not a directory.`, {
      property: "cwd",
    });
  }
  return [real, toWorkspaceRelative(await realWorkspace(ctx.workspace), real)];
}

/**
 * The timeout shell.run applies: the call's own, capped by the host's per-call limit minus
 * a small margin, so that our kill-and-report finishes before the executor's backstop fires
 * (which would report the timeout without the output so far).
 */
export function runTimeout(requested: number | undefined, hostLimitMs: number): number {
  const margin = Math.min(2_500, Math.floor(hostLimitMs / 5));
  return Math.max(1, Math.min(requested ?? DEFAULT_RUN_TIMEOUT_MS, hostLimitMs - margin));
}

function describeState(info: BackgroundProcessInfo): string {
  if (info.running) return `is running (pid ${info.pid})`;
  if (info.signal) return `was killed by ${info.signal}`;
  return `exited with code ${info.exitCode}`;
}

function formatOutput(out: BackgroundOutput, lines: number, maxBytes: number): string {
  const { info } = out;
  const header = `${info.id} ${describeState(info)}: ${clipCommand(info.command)}`;
  if (out.text === "") return `${header}\n${info.running ? "(no output yet)" : "(no output)"}`;
  const dropped = out.droppedBytes > 0 ? `; ${out.droppedBytes} older bytes are no longer kept` : "";
  const body = keepTail(out.text, Math.max(256, maxBytes - 512));
  const shown = out.text.trimEnd().split("\n").length;
  const which = shown < lines && out.droppedBytes === 0 ? `all ${shown}` : `last ${shown}`;
  return `${header}\n--- output, ${which} lines (stdout+stderr)${dropped} ---\n${body.trimEnd()}`;
}

/** The manager's "no such process" error as a failed result the model can act on. */
function unknownProcess(error: unknown): ToolResult {
  if (CapgateError.isInstance(error) && error.code === "not_found") {
    return {
      success: false,
      summary: `${error.message.replace(/^no/, "No")} Use an id returned by shell.start.`,
    };
  }
  throw error;
}

/** shell.*: commands in the workspace, all through the shell policy, with background processes kept per host. */
export const capability = defineCapability({
  manifest,
  policies: { run: commandPolicy, start: commandPolicy },
  handlers: {
    run: async (args, ctx) => {
      const [cwd, cwdLabel] = await workingDirectory(ctx, args.cwd);
      const timeoutMs = runTimeout(args.timeout_ms, ctx.limits.timeoutMs);
      const started = performance.now();
      // runShell checks the policy again (deny rules cannot be skipped by calling the handler
      // directly); an ask rule was already put to the approver by the executor, hence "allow".
      const result = await runShell({
        command: args.command,
        check: checkShellCommand,
        policy: ctx.policy.shell,
        onAsk: "allow",
        cwd,
        env: ctx.env,
        sandbox: sandboxTarget(ctx),
        timeoutMs,
        maxOutputBytes: ctx.limits.outputBytes,
        signal: ctx.signal,
      });
      const durationMs = Math.round(performance.now() - started);
      return {
        success: result.exitCode === 0 && !result.timedOut && !result.aborted,
        summary: formatRun(args.command, cwdLabel, result, timeoutMs, ctx.limits.outputBytes),
        data: { command: args.command, cwd: cwdLabel, timeoutMs, durationMs, ...result },
      };
    },

    start: async (args, ctx) => {
      const [cwd, cwdLabel] = await workingDirectory(ctx, args.cwd);
      const manager = await backgroundProcesses(ctx);
      const info = await manager.startShell({
        command: args.command,
        check: checkShellCommand,
        policy: ctx.policy.shell,
        onAsk: "allow",
        cwd,
        env: ctx.env,
        sandbox: sandboxTarget(ctx),
      });
      const id = JSON.stringify({ id: info.id });
      if (!info.running) {
        return {
          success: false,
          summary: `Could not start ${clipCommand(args.command)}; shell.output ${id} shows why.`,
          data: { ...info, cwd: cwdLabel },
        };
      }
      const where = cwdLabel === "." ? "" : ` in ${cwdLabel}`;
      return {
        success: true,
        summary: `Started ${info.id} (pid ${info.pid})${where}: ${clipCommand(args.command)}. Read its output with shell.output ${id}; stop it with shell.stop ${id}.`,
        data: { ...info, cwd: cwdLabel },
      };
    },

    output: async (args, ctx) => {
      const manager = await backgroundProcesses(ctx);
      const lines = args.tail_lines ?? DEFAULT_TAIL_LINES;
      let out: BackgroundOutput;
      try {
        out = manager.output(args.id, lines);
      } catch (error) {
        return unknownProcess(error);
      }
      return {
        success: true,
        summary: formatOutput(out, lines, ctx.limits.outputBytes),
        data: { ...out.info, output: out.text, droppedBytes: out.droppedBytes },
      };
    },

    stop: async (args, ctx) => {
      const manager = await backgroundProcesses(ctx);
      let before: BackgroundOutput;
      try {
        // Read first: stop() forgets the process once its group is gone.
        before = manager.output(args.id, DEFAULT_TAIL_LINES);
      } catch (error) {
        return unknownProcess(error);
      }
      const info = await manager.stop(args.id);
      const ended = info.signal ? `killed by ${info.signal}` : `exit code ${info.exitCode}`;
      const how = before.info.running
        ? `Stopped ${info.id} and its child processes (${ended})`
        : `${info.id} had already ended (${ended}); any child processes it left were stopped`;
      const final = formatOutput({ ...before, info }, DEFAULT_TAIL_LINES, ctx.limits.outputBytes);
      return {
        success: true,
        summary: `${how}.\n${final.slice(final.indexOf("\n") + 1)}`,
        data: { ...info, output: before.text },
      };
    },
  },
});
