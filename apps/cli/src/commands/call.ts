import { progressText } from "@capgate/host";
import { terminalApprover, terminalElicitation } from "@capgate/host/terminal";
import { type GlobalOptions, openHarness, parseApproval, parseJsonArgument } from "../context.js";
import { CliError, ExitCode } from "../errors.js";
import { type CliIO, paint } from "../io.js";
import { printJson } from "../json.js";
import { unknownName } from "../suggest.js";

export interface CallOptions {
  workspace?: string;
  profile?: string;
  approval?: string;
  json?: boolean;
}

/**
 * `capgate call TOOL '<json>'`: exit 0 success, 1 tool failure (an MCP server that crashed
 * or timed out included), 2 rejected (unknown tool or profile, invalid arguments, policy).
 */
export async function callCommand(
  tool: string,
  argsText: string | undefined,
  options: CallOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const args = await parseJsonArgument(argsText, "the tool arguments");
  parseApproval(options.approval);
  const harness = await openHarness(
    global,
    {
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.approval ? { approval: options.approval } : {}),
    },
    {
      io,
      approve: terminalApprover(io, undefined, undefined, false),
      onElicitation: terminalElicitation(io),
    },
  );
  try {
    if (options.profile && !harness.profiles[options.profile])
      throw await unknownName("profile", options.profile, Object.keys(harness.profiles));
    // Progress of a long MCP call goes to stderr as it arrives (stdout keeps the result alone).
    const onProgress = (progress: { progress: number; total?: number; message?: string }) =>
      io.err(paint(io).dim(`… ${progressText(progress)}`));
    const outcome = await harness
      .callTool(tool, args, { ...(options.profile ? { profile: options.profile } : {}), onProgress })
      .catch((error: unknown) => {
        throw asArgumentsError(error);
      });
    if (options.json) {
      printJson(io, {
        ...outcome.result,
        via: outcome.via,
        ...(outcome.server ? { server: outcome.server } : {}),
      });
    } else if (outcome.result.success) {
      io.out(outcome.result.summary);
    } else {
      // The summary (a command's output, say) is the result; the one stderr line says it failed.
      io.out(outcome.result.summary);
      io.err(`${paint(io).yellow("tool failed:")} ${tool} — ${outcome.result.summary.split("\n")[0]}`);
    }
    return outcome.result.success ? ExitCode.ok : ExitCode.failure;
  } finally {
    await harness.close();
  }
}

/**
 * A schema error names the property inside the tool's arguments (`a`); the command line
 * passed them as the `arguments` JSON, so name it as `/tools/call` does: `arguments.a`.
 */
function asArgumentsError(error: unknown): unknown {
  const e = error as { code?: unknown; property?: unknown; message?: unknown; exitCode?: unknown };
  if (e?.code !== "invalid_arguments" || typeof e.property !== "string" || e.property.startsWith("arguments"))
    return error;
  return new CliError(String(e.message), ExitCode.rejected, undefined, {
    code: "invalid_arguments",
    property: e.property === "" ? "arguments" : `arguments.${e.property}`,
  });
}
