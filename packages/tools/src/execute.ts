import {
  CapgateError,
  closestMatch,
  describeIssues,
  signatureFromSchema,
  type ToolRisk,
  validate,
} from "@capgate/schema";
import { approvalNeeded, requireApproval } from "./approval.js";
import type { CapabilitySet } from "./capability-set.js";
import { InvalidArgumentsError, UnknownToolError } from "./errors.js";
import { truncateMiddle } from "./truncate.js";
import type { ApprovalRequest, PolicyVerdict, ToolContext, ToolResult } from "./types.js";

/** Anything that can say whether a tool's capability is loaded; a Router is one. */
export interface LoadedTools {
  isToolLoaded(tool: string): boolean;
}

/** The context executeTool needs: a ToolContext plus what can be dispatched and what is loaded. */
export interface ExecuteContext extends ToolContext {
  capabilities: CapabilitySet;
  loaded: LoadedTools;
}

/**
 * Run one tool call through the gate: known and loaded → arguments valid against the
 * tool's schema → policy → approval → handler (with timeout and output cap).
 * Rejections (unknown tool, invalid arguments, policy or approval refusal) throw a
 * CapgateError; everything that happens once the handler runs is a ToolResult.
 */
export async function executeTool(toolName: string, args: unknown, ctx: ExecuteContext): Promise<ToolResult> {
  const found = ctx.capabilities.lookup(toolName);
  if (!found) {
    const guess = closestMatch(toolName, ctx.capabilities.toolNames());
    const hint = guess ? ` Did you mean '${guess}'?` : " Use capability_search to find the right tool.";
    throw new UnknownToolError(toolName, `Unknown tool '${toolName}'.${hint}`);
  }
  const { capability, tool } = found;
  const capName = capability.manifest.name;
  if (!ctx.loaded.isToolLoaded(toolName)) {
    throw new UnknownToolError(
      toolName,
      `Tool '${toolName}' is not loaded: capability '${capName}' is not loaded; call capability_load {"name":"${capName}"} first.`,
      { owner: capName },
    );
  }

  const input = args === undefined ? {} : args;
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new InvalidArgumentsError(`Arguments for ${toolName} must be an object.`, {
      property: "arguments",
    });
  }
  const argObj = input as Record<string, unknown>;
  const checked = validate(tool.inputSchema, argObj);
  if (!checked.ok) {
    const { property, text } = describeIssues(checked.errors, { root: "arguments" });
    throw new InvalidArgumentsError(
      `Invalid arguments for ${toolName}: ${text} Signature: ${signatureFromSchema(toolName, tool.inputSchema)}.`,
      { property },
    );
  }

  const risk: ToolRisk = tool.risk ?? "read";
  const policy = capability.policies.get(toolName);
  let verdict: PolicyVerdict | undefined;
  try {
    verdict = (policy ? await policy(argObj, ctx) : undefined) as PolicyVerdict | undefined;
  } catch (error) {
    // A refusal (or a broken policy configuration) is thrown; a path the check found missing
    // (a parent that is a file, say) or a plain error is a failure of this call, reported like one.
    if (CapgateError.isInstance(error) && error.code !== "not_found") throw error;
    return {
      success: false,
      summary: `${toolName} failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }

  const mode = ctx.policy.approval ?? "never";
  const askReason = verdict?.ask;
  if (askReason !== undefined || approvalNeeded(mode, risk)) {
    const request: ApprovalRequest = {
      tool: toolName,
      capability: capName,
      risk,
      arguments: argObj,
      description: askReason ?? `${toolName} (${risk}) ${oneLine(argObj)}`,
    };
    await requireApproval(ctx, request, askReason ?? `approval mode '${mode}'`);
  }

  return runHandler(toolName, argObj, ctx, capability.handlers.get(toolName)!);
}

async function runHandler(
  toolName: string,
  args: Record<string, unknown>,
  ctx: ExecuteContext,
  handler: (args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>,
): Promise<ToolResult> {
  if (ctx.signal.aborted) return { success: false, summary: `${toolName} was not run: the run was aborted.` };
  const controller = new AbortController();
  const onAbort = () => controller.abort(ctx.signal.reason);
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  const timeoutMs = ctx.limits.timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ToolResult>((resolve) => {
    timer = setTimeout(() => {
      // Settle first so the race reports the timeout, then stop the handler's work.
      resolve({ success: false, summary: `${toolName} timed out after ${timeoutMs} ms and was stopped.` });
      controller.abort(new Error("timeout"));
    }, timeoutMs);
  });
  const handlerCtx: ToolContext = { ...stripExecutorFields(ctx), signal: controller.signal };
  try {
    const result = await Promise.race([handler(args, handlerCtx), timeout]);
    return capResult(result, ctx.limits.outputBytes);
  } catch (error) {
    if (
      CapgateError.isInstance(error) &&
      (error.code === "policy_denied" || error.code === "invalid_arguments")
    ) {
      throw error;
    }
    if (controller.signal.aborted && ctx.signal.aborted) {
      return { success: false, summary: `${toolName} was aborted.` };
    }
    const message = error instanceof Error ? error.message : String(error);
    return capResult({ success: false, summary: `${toolName} failed: ${message}` }, ctx.limits.outputBytes);
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

function stripExecutorFields(ctx: ExecuteContext): ToolContext {
  const { capabilities: _c, loaded: _l, ...rest } = ctx;
  return rest;
}

function capResult(result: ToolResult, maxBytes: number): ToolResult {
  if (typeof result?.summary !== "string" || typeof result.success !== "boolean") {
    return {
      success: false,
      summary: "the tool returned a malformed result (expected { success, summary })",
    };
  }
  const cut = truncateMiddle(result.summary, maxBytes);
  if (!cut.truncated) return result;
  return { ...result, summary: cut.text };
}

function oneLine(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
