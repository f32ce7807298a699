import type { ContentAnnotations, ContentBlock, ToolManifest, ToolRisk } from "@capgate/schema";

/** MCP content annotations: who a block is for, how much it matters, when it changed. */
export type ToolContentAnnotations = ContentAnnotations;

/**
 * One content block of a tool result, in MCP's shapes (text, image, audio, resource_link,
 * embedded resource), with annotations and `_meta` kept as sent. Binary payloads are base64.
 */
export type ToolContent = ContentBlock;

/** What every tool call returns: @capgate/schema's ToolResult, shared with @capgate/mcp-client. */
import type { ToolResult } from "@capgate/schema";

export type { ToolResult };

/** The approval modes, in order of how much they ask: the one list config, CLI and HTTP API check against. */
export const APPROVAL_MODES = ["never", "on-risk", "always"] as const;

/** `never` (default): no prompts; `on-risk`: ask for write, exec and network tools; `always`: ask for every call. */
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

export interface ApprovalRequest {
  tool: string;
  capability: string;
  risk: ToolRisk;
  arguments: Record<string, unknown>;
  /** One line for a human: what is about to happen. */
  description: string;
  /**
   * True when the call is asked about only because of the approval mode (`on-risk`,
   * `always`). Only such a question may be answered "allow this tool for the rest of the
   * run", and only such questions does that answer cover later. A question a configured
   * rule asks (a shell `ask` rule, an MCP server's `"ask"` override) is asked every time.
   * Absent means false.
   */
  grantable?: boolean;
}

/** Answers an approval request; resolves true to allow. Hosts supply it (CLI prompt, server endpoint). */
export type ApprovalHook = (request: ApprovalRequest, signal: AbortSignal) => Promise<boolean>;

/** The slice of a profile that tools need: its name and whether it may spawn workers. */
export interface ProfileInfo {
  name: string;
  maySpawnWorkers: boolean;
}

export interface ToolLimits {
  /** Wall-clock limit for one tool call, unless the tool's own argument sets a shorter one. */
  timeoutMs: number;
  /** Largest summary (and captured stdout/stderr) returned to the model, in UTF-8 bytes. */
  outputBytes: number;
  /** Largest file read in one fs.read page, in bytes. */
  readBytes: number;
  /** Largest body fetched by web tools, in bytes. */
  fetchBytes: number;
}

export const DEFAULT_LIMITS: ToolLimits = Object.freeze({
  timeoutMs: 120_000,
  outputBytes: 64 * 1024,
  readBytes: 256 * 1024,
  fetchBytes: 2 * 1024 * 1024,
});

/**
 * A prefix rule for the shell policy: matches any command the parser finds (in every
 * position, behind wrappers such as `sudo`/`env`/`timeout`, inside `bash -c` strings) whose
 * words start with `prefix`. The first word is compared by basename (`/usr/bin/git` is
 * `git`); `*` and `?` are wildcards inside a word; a word known only at run time matches.
 * Options are not reordered: `["rm", "-rf"]` does not match `rm -r -f`.
 */
export interface ShellPrefixRule {
  /** Words the segment must start with, e.g. ["git", "push"] or ["rm", "-rf"]. */
  prefix: string[];
  /** Shown to the model (deny) or the approver (ask). */
  reason?: string;
  /** Command lines this rule must match; checked when the policy loads (a mismatch is an error). */
  mustMatch?: string[];
  /** Command lines this rule must not match; checked when the policy loads. */
  mustNotMatch?: string[];
}

/**
 * How sandboxed commands reach the network: `none` — not at all; `guarded` (default) — only
 * through a host proxy that applies the web.* rules (no loopback, link-local or private
 * addresses unless `web.allowHosts`, checked on the resolved address); `full` — the same
 * proxy without address checks (any host, the host's loopback included).
 */
export type ShellNetwork = "none" | "guarded" | "full";

export interface ShellPolicyConfig {
  deny?: ShellPrefixRule[];
  ask?: ShellPrefixRule[];
  /**
   * Commands that may run although the shell policy cannot read everything they run: with
   * deny or ask rules configured, such commands are asked about unless an allow rule names them.
   */
  allow?: ShellPrefixRule[];
  /**
   * `on` (default): every command runs in the OS sandbox (bubblewrap), and is refused when the
   * sandbox cannot start. `off`: commands run unsandboxed (the CLI warns on every run).
   */
  sandbox?: "on" | "off";
  /** The sandbox's network (default `guarded`). */
  network?: ShellNetwork;
  /** Absolute path of bubblewrap (default /usr/bin/bwrap). */
  bwrap?: string;
}

export interface WebPolicyConfig {
  /** Hosts or host:port exempt from the private-address block, e.g. ["127.0.0.1:3000"]. */
  allowHosts?: string[];
}

export interface PolicyConfig {
  shell?: ShellPolicyConfig;
  web?: WebPolicyConfig;
  approval?: ApprovalMode;
}

/** A spawned worker as the workers tools see it. */
export interface WorkerInfo {
  id: string;
  goal: string;
  profile: string;
  status: "running" | "finished" | "impossible" | "failed" | "aborted" | "step_limit";
  runId: string;
  summary?: string;
}

/** Host service behind workers.*: the loop provides it. */
export interface WorkerService {
  spawn(request: { goal: string; profile?: string }, signal: AbortSignal): Promise<WorkerInfo>;
  wait(id: string, timeoutMs: number, signal: AbortSignal): Promise<WorkerInfo>;
  list(): Promise<WorkerInfo[]>;
  cancel(id: string): Promise<WorkerInfo>;
}

export interface MemoryEntry {
  id: string;
  text: string;
  tags: string[];
  source: "remember" | "goal_note" | "run_summary";
  createdAt: string;
  runId?: string;
}

/** Host service behind memory.* and memory_search: the loop provides it. */
export interface MemoryService {
  remember(entry: {
    text: string;
    tags?: string[];
    source?: MemoryEntry["source"];
    runId?: string;
  }): Promise<MemoryEntry>;
  forget(id: string): Promise<boolean>;
  list(limit: number): Promise<MemoryEntry[]>;
  search(query: string, limit: number): Promise<Array<MemoryEntry & { score: number }>>;
}

/**
 * Long-lived things a capability keeps between calls (a browser, background processes,
 * MCP sessions), owned by the host so it can close them all on shutdown.
 */
export interface HostResources {
  /** The resource under `key`, created by `create` on first use and closed by `dispose` at shutdown. */
  acquire<T>(
    key: string,
    create: () => Promise<T> | T,
    dispose: (value: T) => Promise<void> | void,
  ): Promise<T>;
  /** The resource under `key` if it exists, without creating it. */
  peek<T>(key: string): T | undefined;
  /** Dispose one resource now (e.g. browser_panel.close); the next acquire creates it again. */
  release(key: string): Promise<void>;
  /** Dispose everything, newest first. */
  closeAll(): Promise<void>;
}

/** How one nested call is made: its stop side, and what to do while a person is asked to approve it. */
export interface NestedCallOptions {
  /** Stops the call (the enclosing call's deadline or abort). */
  signal: AbortSignal;
  /**
   * Called when the call starts waiting for an operator's approval; the function it returns
   * is called when the wait ends. The caller stops its clocks in between: a person's answer
   * is not the program's time.
   */
  onApprovalWait?: () => () => void;
}

/**
 * Host service behind script.run (and any capability that chains tools): each call takes
 * exactly the path of the model's capability_call in the same session — known and loaded →
 * closed-schema validation → policy → approval → handler, then the MCP fallthrough where
 * the calling loop allows it — and is traced as a call nested in the enclosing one. The
 * host (loop session, direct call) provides it; a capability never builds its own.
 */
export interface ToolCallService {
  /** Nesting level of the calls made through this service (1 for a top-level call's children). */
  readonly depth: number;
  /** The tools a call can reach now (the session's loaded tools, MCP ones included), sorted by name. */
  tools(): ToolManifest[];
  /**
   * One call through the gate. Rejections (unknown or not-loaded tool, invalid arguments,
   * policy or approval refusal, the run's budget) throw a CapgateError with the gate's
   * `code` and `property`; everything once the handler ran is the ToolResult.
   */
  call(tool: string, args: Record<string, unknown>, options: NestedCallOptions): Promise<ToolResult>;
}

/** Host services reach capabilities through the context, never by importing the host. */
export interface HostServices {
  workers?: WorkerService;
  memory?: MemoryService;
  /** Calls to other tools of the session, through the gate (script.run). */
  calls?: ToolCallService;
  /** Opaque to tools: the mcp capability reads it as the host's MCP session pool. */
  mcp?: unknown;
  /** Path of the Chromium binary for browser_panel (default: /usr/bin/chromium). */
  browserExecutable?: string;
}

/** Everything a handler may use. Built by the host; handlers never read process globals. */
export interface ToolContext {
  /** Absolute, real path of the workspace root. */
  workspace: string;
  signal: AbortSignal;
  /** Environment for subprocesses (a minimal, explicit one; not process.env wholesale). */
  env: Record<string, string | undefined>;
  profile: ProfileInfo;
  limits: ToolLimits;
  policy: PolicyConfig;
  approve?: ApprovalHook;
  services: HostServices;
  resources: HostResources;
  /** Where capabilities may keep state (e.g. $CAPGATE_HOME). */
  stateDir: string;
  /**
   * Stop this call's timeout clock while it waits on a person (a nested call's approval);
   * returns the function that starts it again. Set by the executor for handlers.
   */
  pauseTimeout?: () => () => void;
}

/** What a capability's policy may answer besides refusing (by throwing PolicyDeniedError): ask a human first. */
export interface PolicyVerdict {
  ask?: string;
}

export type PolicyCheck<Args = Record<string, unknown>> = (
  args: Args,
  ctx: ToolContext,
) => Promise<PolicyVerdict | undefined> | PolicyVerdict | undefined;
