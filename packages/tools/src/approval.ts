import type { ToolRisk } from "@capgate/schema";
import { PolicyDeniedError } from "./errors.js";
import type { ApprovalMode, ApprovalRequest, ToolContext } from "./types.js";

/** Whether the approval mode asks before a call of this risk: `always` every call, `on-risk` write/exec/network. */
export function approvalNeeded(mode: ApprovalMode | undefined, risk: ToolRisk): boolean {
  return mode === "always" || (mode === "on-risk" && risk !== "read");
}

/**
 * Ask the host's approver and resolve only when the call may go ahead. The one place
 * approval is asked — for native tools, MCP tools and verify — so every refusal reads
 * the same: no approver, a failing approver, or a "no" each throw PolicyDeniedError.
 * @param why what made approval necessary, for the no-approver message.
 */
export async function requireApproval(
  ctx: Pick<ToolContext, "approve" | "signal">,
  request: ApprovalRequest,
  why: string,
): Promise<void> {
  if (!ctx.approve) {
    throw new PolicyDeniedError(
      `${request.tool} needs approval (${why}), and no one can approve here; it was not run.`,
    );
  }
  let approved = false;
  try {
    approved = await ctx.approve(request, ctx.signal);
  } catch (error) {
    throw new PolicyDeniedError(
      `Approval for ${request.tool} failed: ${(error as Error).message}; it was not run.`,
      {
        cause: error,
      },
    );
  }
  if (!approved) throw new PolicyDeniedError(`The operator denied ${request.tool}; it was not run.`);
}
