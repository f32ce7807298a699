import { CapgateError } from "@capgate/schema";
import {
  type GlobalOptions,
  openHarness,
  parseApproval,
  parseJsonArgument,
  terminalApprover,
} from "../context.js";
import { terminalElicitation } from "../elicitation.js";
import { CliError } from "../errors.js";
import { type CliIO, paint } from "../io.js";

export interface CallOptions {
  workspace?: string;
  profile?: string;
  approval?: string;
  json?: boolean;
}

/** `capgate call TOOL '<json>'`: exit 0 success, 1 tool failure, 2 rejected. */
export async function callCommand(
  tool: string,
  argsText: string | undefined,
  options: CallOptions,
  global: GlobalOptions,
  io: CliIO,
): Promise<number> {
  const args = parseJsonArgument(argsText, "the tool arguments");
  parseApproval(options.approval);
  const harness = await openHarness(
    global,
    {
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.approval ? { approval: options.approval } : {}),
    },
    { approve: terminalApprover(io), onElicitation: terminalElicitation(io) },
  );
  const p = paint(io);
  try {
    const outcome = await harness.callTool(tool, args, options.profile ? { profile: options.profile } : {});
    if (options.json) {
      io.out(
        JSON.stringify(
          { ...outcome.result, via: outcome.via, ...(outcome.server ? { server: outcome.server } : {}) },
          null,
          2,
        ),
      );
    } else if (outcome.result.success) {
      io.out(outcome.result.summary);
    } else {
      io.err(`${p.yellow("tool failed:")} ${outcome.result.summary}`);
    }
    return outcome.result.success ? 0 : 1;
  } catch (error) {
    if (CapgateError.isInstance(error)) {
      if (options.json) {
        io.out(JSON.stringify({ error: error.toJSON() }, null, 2));
        return 2;
      }
      const where = error.property ? ` (at ${error.property})` : "";
      throw new CliError(`${error.code}${where}: ${error.message}`, 2);
    }
    throw error;
  } finally {
    await harness.close();
  }
}
