import { CapgateError, type CapgateErrorOptions } from "@capgate/schema";

/** The tool is not known, or its capability is not loaded. Code `unknown_tool`. */
export class UnknownToolError extends CapgateError {
  readonly tool: string;
  /** The registered capability that owns the tool, when there is one (it is just not loaded). */
  readonly owner: string | undefined;
  constructor(tool: string, message: string, options: CapgateErrorOptions & { owner?: string } = {}) {
    super("unknown_tool", message, { property: options.property ?? "tool", cause: options.cause });
    this.name = "UnknownToolError";
    this.tool = tool;
    this.owner = options.owner;
  }
}

/** Arguments failed the tool's schema. Code `invalid_arguments`, `property` names the path. */
export class InvalidArgumentsError extends CapgateError {
  constructor(message: string, options: CapgateErrorOptions = {}) {
    super("invalid_arguments", message, options);
    this.name = "InvalidArgumentsError";
  }
}

/** A policy refused the call before anything ran. Code `policy_denied`. */
export class PolicyDeniedError extends CapgateError {
  constructor(message: string, options: CapgateErrorOptions = {}) {
    super("policy_denied", message, options);
    this.name = "PolicyDeniedError";
  }
}

/** True for an unknown or not-loaded tool, across package copies (the MCP fallthrough trigger). */
export function isUnknownToolError(error: unknown): error is UnknownToolError {
  return CapgateError.isInstance(error) && error.code === "unknown_tool";
}

/** True for a rejection (unknown tool, invalid arguments, policy) as opposed to a tool failure. */
export function isRejection(error: unknown): error is CapgateError {
  return (
    CapgateError.isInstance(error) &&
    (error.code === "unknown_tool" || error.code === "invalid_arguments" || error.code === "policy_denied")
  );
}
