import type { McpPool } from "@capgate/mcp-client";
import type { ModelClient } from "@capgate/models";
import type { ProfilePolicy } from "@capgate/profiles";
import type { Registry } from "@capgate/registry";
import type {
  ApprovalRequest,
  CapabilitySet,
  HostResources,
  MemoryService,
  PolicyConfig,
  ToolLimits,
} from "@capgate/tools";
import type { RunStore } from "./run-store-api.js";

/** An approval request as the loop sends it to the host: with ids the host can answer by. */
export interface LoopApprovalRequest extends ApprovalRequest {
  approvalId: string;
  runId: string;
  /** SHA-256 of the arguments' canonical JSON (`argumentsHash` of @capgate/schema). */
  argumentsHash: string;
  /** When the request stops being answerable (from the hook's `timeoutMs`); absent: no expiry. */
  expiresAt?: string;
  /**
   * For a hook marked `announcesPending`: call it once the request can be answered (stored
   * where answers are looked up). The loop emits `approval_requested` then, so whoever sees
   * that event — on any node — can answer it at once. Other hooks get the event before they
   * are called.
   */
  onPending?: () => void;
}

/** How far a yes reaches: this call only, or every later call of the same tool in this run or chat session. */
export type ApprovalScope = "once" | "run";

/** A hook's answer with who gave it; a bare boolean is a `once` answer by `host`. */
export interface ApprovalDecision {
  approved: boolean;
  /** Default `once`; `run` makes the session keep a grant for this tool (exact name). */
  scope?: ApprovalScope;
  /** As the trace records it: `cli`, `api:<owner>`, `viewer`, … */
  decidedBy: string;
}

/**
 * Asks the host to approve one call. `announcesPending: true` says the hook calls
 * `request.onPending()` once the request is answerable (a registry whose store is not in
 * this process, such as PostgreSQL, is answerable only after its write). `timeoutMs` (> 0)
 * says the hook stops waiting after that long: the loop puts the deadline in the request
 * (`expiresAt`) and the event, and the hook refuses answers after it.
 */
export type LoopApprovalHook = ((
  request: LoopApprovalRequest,
  signal: AbortSignal,
) => Promise<boolean | ApprovalDecision>) & {
  readonly announcesPending?: boolean;
  readonly timeoutMs?: number;
};

/** A hook's answer as a decision (a bare boolean: `once`, decided by `host`). */
export function asDecision(answer: boolean | ApprovalDecision): ApprovalDecision {
  return typeof answer === "boolean" ? { approved: answer, decidedBy: "host" } : answer;
}

/**
 * What a loop runs on. A host (the harness, a test, a new frontend) builds it once and
 * passes it to every run; nothing here is global.
 */
export interface LoopEnvironment {
  registry: Registry;
  /** Capabilities with handlers (built-ins and any the host adds). */
  capabilities: CapabilitySet;
  /** Profiles by name (built-ins merged with config overrides). */
  profiles: Record<string, ProfilePolicy>;
  /** Where traces, memory and caches live ($CAPGATE_HOME). */
  stateDir: string;
  store: RunStore;
  memory?: MemoryService;
  policy: PolicyConfig;
  limits: ToolLimits;
  approve?: LoopApprovalHook;
  /**
   * The host's long-lived resources, for tool calls outside a run (a frontend's direct
   * calls). A goal run and a chat each get a scope of their own instead, closed when they
   * end, so nothing a run started (background processes, a browser, ad-hoc MCP servers)
   * outlives it.
   */
  resources: HostResources;
  /** Environment for subprocesses (minimal and explicit). */
  env: Record<string, string | undefined>;
  /** The configured MCP servers' pool: the chat loop falls through to it, the goal loop only with `mcp: true`. */
  mcp?: McpPool;
  browserExecutable?: string;
  /** Most tool calls per run or chat, a script's nested calls included (default: no limit). */
  maxToolCalls?: number;
  /** Most workers running at once per host (default 4). */
  workerLimit?: number;
  /** Model for a worker's child run (default: the parent's model). */
  workerModel?: (request: { goal: string; profile: string; parentRunId: string }) => ModelClient;
}
