import type { Harness, ResolvedConfig } from "@capgate/harness";
import type { LoopApprovalHook } from "@capgate/loop";
import type { ElicitationHandler } from "@capgate/mcp-client";
import { APPROVAL_MODES, type ApprovalMode } from "@capgate/tools";
import { CliError, ExitCode } from "./errors.js";
import { type CliIO, paint } from "./io.js";

export interface GlobalOptions {
  config?: string;
  debug?: boolean;
  /** --capability, repeatable: plugin packages or paths (from the current directory). */
  capability?: string[];
  json?: boolean;
}

export interface HarnessRequest {
  workspace?: string;
  approval?: string;
  stateDir?: string;
  /** Only the demo's (bundled commands): see HarnessOptions.unsandboxedIfUnavailable. */
  unsandboxedIfUnavailable?: (reason: string) => void;
}

export function parseApproval(value: string | undefined): ApprovalMode | undefined {
  if (value === undefined) return undefined;
  if ((APPROVAL_MODES as readonly string[]).includes(value)) return value as ApprovalMode;
  throw new CliError(
    `--approval must be one of ${APPROVAL_MODES.join(", ")}, got '${value}'`,
    ExitCode.rejected,
  );
}

/**
 * A whole-number flag: `fallback` when it is absent; plain digits within `min`–`max`
 * (default 1 and up) otherwise, or a usage error (exit 2) naming the flag and the range.
 */
export function intOption<F extends number | undefined>(
  value: string | undefined,
  flag: string,
  fallback: F,
  range: { min?: number; max?: number; unit?: string } = {},
): number | F {
  if (value === undefined) return fallback;
  const { min = 1, max = Number.MAX_SAFE_INTEGER } = range;
  const n = Number(value);
  if (/^\d+$/.test(value) && Number.isSafeInteger(n) && n >= min && n <= max) return n;
  const bounds =
    max < Number.MAX_SAFE_INTEGER
      ? `an integer from ${min} to ${max}`
      : min === 0
        ? "a whole number"
        : `an integer of at least ${min}`;
  throw new CliError(
    `${flag} must be ${bounds}${range.unit ? ` (${range.unit})` : ""}, got '${value}'`,
    ExitCode.rejected,
  );
}

/**
 * The config file for a command (--config, else ./capgate.config.json, else none). Loading
 * first does what a capgate process killed mid-command left undone (renames aside a policy
 * file its command created): each such notice is one line on stderr.
 */
export async function loadCliConfig(global: GlobalOptions): Promise<ResolvedConfig> {
  const { loadConfig } = await import("@capgate/harness");
  const config = loadConfig(global.config ? { path: global.config } : {});
  for (const notice of config.recovered ?? []) process.stderr.write(`capgate: ${notice}\n`);
  return config;
}

/**
 * The harness for a command: the config file (--config or ./capgate.config.json), its
 * capability plugins plus --capability ones. A plugin that did not load is one warning
 * line on stderr (JSON under --json); the command goes on with the rest.
 */
export async function openHarness(
  global: GlobalOptions,
  request: HarnessRequest,
  extra: { approve?: LoopApprovalHook; onElicitation?: ElicitationHandler; io?: CliIO } = {},
): Promise<Harness> {
  const { createHarness, loadConfig } = await import("@capgate/harness");
  const approval = parseApproval(request.approval);
  const harness = await createHarness({
    config: loadConfig(global.config ? { path: global.config } : {}),
    ...(request.workspace ? { workspace: request.workspace } : {}),
    ...(request.stateDir ? { stateDir: request.stateDir } : {}),
    ...(approval ? { approval } : {}),
    ...(request.unsandboxedIfUnavailable
      ? { unsandboxedIfUnavailable: request.unsandboxedIfUnavailable }
      : {}),
    ...(extra.approve ? { approve: extra.approve } : {}),
    ...(extra.onElicitation ? { onElicitation: extra.onElicitation } : {}),
    ...(global.capability?.length ? { capabilityPlugins: global.capability } : {}),
  });
  for (const notice of harness.notices) process.stderr.write(`${notice}\n`);
  if (extra.io) reportCapabilityProblems(harness, global, extra.io);
  return harness;
}

/**
 * One line on stderr per capability plugin that did not load (or loaded with a contract
 * finding), JSON under --json — the same for every command that opens a harness, the
 * long-running `serve` and `mcp serve` included.
 */
export function reportCapabilityProblems(
  harness: Pick<Harness, "capabilityProblems">,
  global: GlobalOptions,
  io: CliIO,
): void {
  const p = paint(io);
  for (const problem of harness.capabilityProblems) {
    const loaded = problem.severity === "warning";
    if (global.json)
      io.err(
        JSON.stringify({
          warning: { code: loaded ? "capability_contract" : "capability_not_loaded", ...problem },
        }),
      );
    else if (loaded) io.err(`${p.yellow("warning:")} capability '${problem.spec}': ${problem.message}`);
    else io.err(`${p.yellow("warning:")} capability '${problem.spec}' not loaded: ${problem.message}`);
  }
}

/** Parse a JSON argument for a tool, naming the problem (line and column, in words). */
export async function parseJsonArgument(
  text: string | undefined,
  what: string,
): Promise<Record<string, unknown>> {
  if (text === undefined || text.trim() === "") return {};
  const { parseJsonStrict } = await import("@capgate/schema");
  const parsed = parseJsonStrict(text);
  if (!parsed.ok) {
    const at = parsed.line > 1 ? `line ${parsed.line}, column ${parsed.column}` : `column ${parsed.column}`;
    throw new CliError(
      `${what} are not valid JSON at ${at}: ${parsed.message}`,
      ExitCode.rejected,
      `e.g. '{"path": "README.md"}'`,
      {
        code: "invalid_json",
      },
    );
  }
  const value = parsed.value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new CliError(`${what} must be a JSON object`, ExitCode.rejected, `e.g. '{"path": "README.md"}'`, {
      code: "invalid_json",
    });
  }
  return value as Record<string, unknown>;
}
