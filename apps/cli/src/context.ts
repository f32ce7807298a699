import type { Harness } from "@capgate/harness";
import type { LoopApprovalHook } from "@capgate/loop";
import type { ElicitationHandler } from "@capgate/mcp-client";
import type { ApprovalMode } from "@capgate/tools";
import { CliError } from "./errors.js";
import { type CliIO, paint } from "./io.js";

export interface GlobalOptions {
  config?: string;
  debug?: boolean;
}

export interface HarnessRequest {
  workspace?: string;
  approval?: string;
  stateDir?: string;
}

const APPROVAL_MODES: readonly ApprovalMode[] = ["never", "on-risk", "always"];

export function parseApproval(value: string | undefined): ApprovalMode | undefined {
  if (value === undefined) return undefined;
  if ((APPROVAL_MODES as readonly string[]).includes(value)) return value as ApprovalMode;
  throw new CliError(`--approval must be one of ${APPROVAL_MODES.join(", ")}, got '${value}'`, 2);
}

/**
 * The CLI's approver: asks y/n on a terminal; with no terminal to answer, a required
 * approval is denied with a message saying why.
 */
export function terminalApprover(io: CliIO, beforeAsk?: () => void, afterAsk?: () => void): LoopApprovalHook {
  const p = paint(io);
  return async (request) => {
    if (!io.interactive || !io.prompt) {
      io.err(
        `${p.yellow("approval required")} for ${request.tool} (${request.risk}) — denied: no terminal to ask on. Run interactively or use --approval never.`,
      );
      return false;
    }
    beforeAsk?.();
    try {
      const answer = await io.prompt(
        `${p.yellow("?")} allow ${p.bold(request.tool)} (${request.risk}) ${request.description} [y/N] `,
      );
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      afterAsk?.();
    }
  };
}

export async function openHarness(
  global: GlobalOptions,
  request: HarnessRequest,
  extra: { approve?: LoopApprovalHook; onElicitation?: ElicitationHandler } = {},
): Promise<Harness> {
  const { createHarness, loadConfig } = await import("@capgate/harness");
  const config = loadConfig(global.config ? { path: global.config } : {});
  const approval = parseApproval(request.approval);
  return createHarness({
    config,
    ...(request.workspace ? { workspace: request.workspace } : {}),
    ...(request.stateDir ? { stateDir: request.stateDir } : {}),
    ...(approval ? { approval } : {}),
    ...(extra.approve ? { approve: extra.approve } : {}),
    ...(extra.onElicitation ? { onElicitation: extra.onElicitation } : {}),
  });
}

/** Parse a JSON argument for a tool, naming the problem. */
export function parseJsonArgument(text: string | undefined, what: string): Record<string, unknown> {
  if (text === undefined || text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(
      `${what} is not valid JSON: ${(error as Error).message}`,
      2,
      `e.g. '{"path": "README.md"}'`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new CliError(`${what} must be a JSON object, e.g. '{"path": "README.md"}'`, 2);
  }
  return value as Record<string, unknown>;
}
