import { CapgateError } from "@capgate/schema";
import { formatProblems, type ManifestProblem } from "./validate-manifest.js";

/** `register()` refused a manifest; `problems` lists every problem, each with its path. */
export class InvalidManifestError extends CapgateError {
  readonly problems: readonly ManifestProblem[];

  constructor(name: string | undefined, problems: readonly ManifestProblem[]) {
    const subject = name === undefined ? "capability manifest" : `capability manifest "${name}"`;
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    super("invalid_manifest", `${subject} is invalid (${count}):\n${formatProblems(problems)}`, {
      property: problems[0]?.path,
    });
    this.name = "InvalidManifestError";
    this.problems = problems;
  }
}

/** A capability with this name is already registered; unregister it first to replace it. */
export class DuplicateCapabilityError extends CapgateError {
  readonly capability: string;

  constructor(capability: string) {
    super(
      "duplicate_capability",
      `capability "${capability}" is already registered; unregister it first to replace it`,
      { property: "name" },
    );
    this.name = "DuplicateCapabilityError";
    this.capability = capability;
  }
}

/** Bad input to the MCP side of the registry (e.g. a server name outside ^[A-Za-z0-9_-]{1,64}$). */
export class InvalidMcpServerError extends CapgateError {
  constructor(message: string, property?: string) {
    super("invalid_mcp_server", message, property === undefined ? {} : { property });
    this.name = "InvalidMcpServerError";
  }
}
