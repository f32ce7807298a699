import type { Harness } from "@capgate/harness";
import type { LoopApprovalHook } from "@capgate/loop";
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

/** Printed to stderr on every run while the config turns the sandbox off. */
export const SANDBOX_OFF_WARNING =
  'capgate: warning: the OS sandbox is off ("shell": { "sandbox": "off" } in capgate.config.json) — commands the model runs are not confined to the workspace, can read your secrets and reach your desktop and network.';

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
  extra: { approve?: LoopApprovalHook } = {},
): Promise<Harness> {
  const { createHarness, loadConfig } = await import("@capgate/harness");
  const config = loadConfig(global.config ? { path: global.config } : {});
  const approval = parseApproval(request.approval);
  if (config.config.shell?.sandbox === "off") {
    // Every run, one line: the operator chose this, but must not forget it.
    process.stderr.write(`${SANDBOX_OFF_WARNING}\n`);
  }
  return createHarness({
    config,
    ...(request.workspace ? { workspace: request.workspace } : {}),
    ...(request.stateDir ? { stateDir: request.stateDir } : {}),
    ...(approval ? { approval } : {}),
    ...(extra.approve ? { approve: extra.approve } : {}),
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
