import { CapgateError } from "@capgate/schema";
import type { ToolContext, ToolResult } from "@capgate/tools";

/** Bytes web.fetch reads when the call gives no `max_bytes` (the host's `limits.fetchBytes` still caps it). */
export const DEFAULT_FETCH_BYTES = 2 * 1024 * 1024;
/** Longest a single fetch or request may take, all redirects and the body included. */
export const MAX_NETWORK_MS = 30_000;

export interface NetworkLimits {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * The size and time limits of one call: the smaller of the argument and the host's limit.
 * The network time is kept under the executor's own timeout so a slow server produces this
 * tool's specific message ("timed out after N ms") rather than the generic one.
 */
export function networkLimits(ctx: ToolContext, maxBytes?: number): NetworkLimits {
  return {
    maxBytes: Math.min(maxBytes ?? DEFAULT_FETCH_BYTES, ctx.limits.fetchBytes),
    timeoutMs: Math.max(1, Math.min(MAX_NETWORK_MS, Math.floor(ctx.limits.timeoutMs * 0.9))),
  };
}

/**
 * A network error as a tool failure the model can act on. Policy refusals (a redirect to a
 * private address) are rethrown: they are rejections, not failures.
 */
export function networkFailure(error: unknown, method: string, url: string): ToolResult {
  if (CapgateError.isInstance(error) && error.code !== "policy_denied") {
    const hint =
      error.code === "timeout"
        ? " The server was too slow; try again later or a smaller page."
        : error.code === "too_many_redirects"
          ? " The URL redirects in a loop or too many times."
          : "";
    return {
      success: false,
      summary: `${method} ${url} failed: ${error.message.replace(/\.$/, "")}.${hint}`,
      data: { url, error: error.code },
    };
  }
  throw error;
}

export function formatBytes(n: number): string {
  return `${n.toLocaleString("en-US")} byte${n === 1 ? "" : "s"}`;
}
