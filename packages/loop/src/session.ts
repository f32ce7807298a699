import { randomUUID } from "node:crypto";
import { executeCapabilityStep, type McpCaller, type McpProgress } from "@capgate/mcp-client";
import { applyProfile, type ProfilePolicy } from "@capgate/profiles";
import { Router } from "@capgate/router";
import {
  argumentsHash,
  type CapabilityManifest,
  CapgateError,
  type ToolAction,
  type ToolRisk,
} from "@capgate/schema";
import {
  type ApprovalHook,
  executeTool,
  type HostResources,
  type ToolContent,
  type ToolContext,
  type ToolResult,
  type WorkerService,
} from "@capgate/tools";
import { withHostPath } from "@capgate/workspace";
import { ApprovalUnansweredError } from "./approval-registry.js";
import { type ApprovalDecision, asDecision, type LoopEnvironment } from "./deps.js";
import { type EventEmitterForRun, type GoalState, type RunOutcome, recordedArguments } from "./events.js";
import { approvingMcpCaller } from "./mcp-approval.js";
import { createToolCallService, type NestedCallObserver } from "./nested-calls.js";
import { loadReply, orderedSignatures, searchReply } from "./replies.js";
import { externaliseContent, type StepImage, structuredLine, type TracedContent } from "./rich-content.js";
import { runVerify } from "./verify.js";

export interface StepOutcome {
  /** What the model reads back. */
  result: string;
  /** Images of the result, for providers that read them (the text above describes them too). */
  images?: StepImage[];
  /** The tool result's content blocks and structuredContent, unflattened (for the MCP gate). */
  content?: ToolContent[];
  structuredContent?: unknown;
  /** Warnings about the result a client should see beside its content (a schema that did not compile, a structuredContent mismatch). */
  warnings?: string[];
  /** The MCP server that answered a capability_call, when one did. */
  server?: string;
  /** False when the action failed or was rejected (a tool failure, an unknown capability, a refused verify). */
  success: boolean;
  /** Set when the action ends the run (or the chat turn). */
  end?: { outcome: Extract<RunOutcome, "finished" | "impossible">; summary: string };
}

export interface SessionOptions {
  env: LoopEnvironment;
  emitter: EventEmitterForRun;
  workspace: string;
  signal: AbortSignal;
  /** Whether capability_call falls through to the configured MCP servers. */
  mcp: boolean;
  /** `always`: finish needs a passing verify in every case (goal loop); `after-change`: only after a write/exec call (chat). */
  verifyGate: "always" | "after-change";
  workers?: WorkerService;
  /**
   * What this session's tools keep between calls (background processes, a browser, ad-hoc
   * MCP servers): the run's own scope, closed when the run ends, so nothing it started
   * outlives it. Default: the host's (`env.resources`).
   */
  resources?: HostResources;
  /** Most tool calls in the run, a script's nested calls included (default: the environment's, else no limit). */
  maxToolCalls?: number;
  /**
   * The MCP servers as this session reaches them (default `env.mcp`): a gate session passes
   * its own scope of the pool, so its upstream sessions are its own.
   */
  mcpCaller?: McpCaller;
}

/** What one action may be given beside its arguments (a gate client's call). */
export interface DispatchOptions {
  /** Aborts this action only (the client cancelled the call); the session's signal still applies. */
  signal?: AbortSignal;
  /** Progress an MCP server reports while a capability_call runs. */
  onProgress?: (progress: McpProgress) => void;
}

/** Progress reports of one call kept in the trace (all still reach `onProgress`). */
const MAX_TRACED_PROGRESS = 200;

const STATE_CHANGING: ReadonlySet<ToolRisk> = new Set(["write", "exec"]);

/**
 * One agent's view of the gate: its router (what is loaded), its profile, its goal
 * state and verification record. Both loops dispatch every action through here.
 */
export class Session {
  readonly router = new Router();
  profile!: ProfilePolicy;
  readonly goalState: GoalState = { notes: [] };
  #lastChangeStep: number | undefined;
  #lastVerifyPassStep: number | undefined;
  #closed = false;
  readonly #asking = new Set<Promise<boolean>>();
  /** Tools allowed for the rest of this run or chat session (exact name → the approval that allowed it). */
  readonly #grants = new Map<string, string>();
  /** Each capability of the last search's hits → its tools, best match first (orders a following load's reply). */
  #lastHits = new Map<string, string[]>();
  #toolCalls = 0;

  constructor(readonly options: SessionOptions) {}

  get env(): LoopEnvironment {
    return this.options.env;
  }

  /** The MCP servers as this session reaches them: its own scope, else the host's pool. */
  get mcp(): McpCaller | undefined {
    return this.options.mcpCaller ?? this.env.mcp;
  }

  /** clear, then preload: after Coder → Researcher, shell.run is no longer loaded. */
  applyProfile(profile: ProfilePolicy): string[] {
    this.profile = profile;
    return applyProfile(this.router, this.env.registry, profile);
  }

  /**
   * Exposed mode: load every capability this session may see (MCP ones only when MCP is
   * on), so each tool can be called directly; returns their manifests.
   */
  loadAllVisible(): CapabilityManifest[] {
    const manifests = this.env.registry.list().filter((m) => this.#visible(m.name));
    for (const m of manifests) this.router.load(m);
    return manifests;
  }

  /** A concrete tool called directly (exposed mode): the same path as capability_call. */
  call(tool: string, toolArgs: Record<string, unknown>, step: number): Promise<StepOutcome> {
    return this.#call(tool, toolArgs, step);
  }

  /** Capabilities visible to this session: MCP ones only when MCP is on. */
  #visible(capability: string): boolean {
    return this.options.mcp || !capability.startsWith("mcp:");
  }

  resetVerification(): void {
    this.#lastChangeStep = undefined;
    this.#lastVerifyPassStep = undefined;
  }

  toolContext(): ToolContext {
    const env = this.env;
    return {
      workspace: this.options.workspace,
      signal: this.options.signal,
      env: env.env,
      profile: { name: this.profile.name, maySpawnWorkers: this.profile.maySpawnWorkers },
      limits: env.limits,
      policy: env.policy,
      ...(env.approve ? { approve: this.#approvalHook() } : {}),
      services: {
        ...(this.options.workers ? { workers: this.options.workers } : {}),
        ...(env.memory ? { memory: env.memory } : {}),
        ...(this.mcp ? { mcp: this.mcp } : {}),
        ...(env.browserExecutable ? { browserExecutable: env.browserExecutable } : {}),
      },
      resources: this.options.resources ?? env.resources,
      stateDir: env.stateDir,
    };
  }

  #approvalHook(): ApprovalHook {
    const { emitter } = this.options;
    const hook = this.env.approve!;
    return async (request, signal) => {
      // A handler still running after its call timed out may ask once the run is over: no one
      // will answer, and the trace has ended.
      if (this.#closed) throw new Error("the run has ended");
      const approvalId = randomUUID();
      const hash = await argumentsHash(request.arguments);
      // "Allow for the rest of this run" was answered for this exact tool name: no one is
      // asked again, and the trace says which approval allowed it.
      // A question a configured rule asks (not the mode) is asked every time, grant or not.
      const grant = request.grantable === true ? this.#grants.get(request.tool) : undefined;
      if (grant !== undefined) {
        emitter.emit({
          type: "approval_resolved",
          approvalId,
          approved: true,
          tool: request.tool,
          argumentsHash: hash,
          scope: "run",
          decidedBy: `grant:${grant}`,
        });
        return true;
      }
      const timeoutMs = hook.timeoutMs ?? 0;
      const expiresAt = timeoutMs > 0 ? new Date(Date.now() + timeoutMs).toISOString() : undefined;
      let announced = false;
      const announce = () => {
        if (announced) return;
        announced = true;
        emitter.emit({
          type: "approval_requested",
          approvalId,
          runId: emitter.runId,
          tool: request.tool,
          risk: request.risk,
          arguments: request.arguments,
          argumentsHash: hash,
          description: request.description,
          ...(expiresAt ? { expiresAt } : {}),
        });
      };
      // A hook that announces emits the event once the request is answerable: a client
      // that reacts to the event at once (another API node, the viewer) must find it pending.
      if (!hook.announcesPending) announce();
      const asked = (async () => {
        let decision: ApprovalDecision = { approved: false, decidedBy: "error" };
        let failure: unknown;
        try {
          decision = asDecision(
            await untilAborted(
              hook(
                {
                  ...request,
                  approvalId,
                  runId: emitter.runId,
                  argumentsHash: hash,
                  ...(expiresAt ? { expiresAt } : {}),
                  onPending: announce,
                },
                signal,
              ),
              signal,
            ),
          );
        } catch (error) {
          failure = error;
          const decidedBy = (error as { decidedBy?: unknown } | undefined)?.decidedBy;
          decision = {
            approved: false,
            decidedBy: typeof decidedBy === "string" ? decidedBy : signal.aborted ? "abort" : "error",
          };
        }
        // Answered or failed before it announced: the trace still pairs requested with resolved.
        announce();
        // "For the rest of the run" holds only for a question of the mode; to a configured
        // rule's question it is a yes to this call (and the trace says "once").
        const scope = decision.approved && request.grantable === true ? (decision.scope ?? "once") : "once";
        if (decision.approved && scope === "run") this.#grants.set(request.tool, approvalId);
        const reason = failure === undefined ? undefined : (failure as Error).message;
        emitter.emit({
          type: "approval_resolved",
          approvalId,
          approved: decision.approved,
          tool: request.tool,
          scope,
          decidedBy: decision.decidedBy,
          ...(reason ? { reason } : {}),
        });
        // Why nobody could answer (no one asked in time, a client that cannot be asked) reaches the model too.
        if (failure !== undefined) throw failure;
        return decision.approved;
      })();
      this.#asking.add(asked);
      try {
        return await asked;
      } finally {
        this.#asking.delete(asked);
      }
    };
  }

  /**
   * Before run_ended: refuse approval requests from now on and wait for those in flight,
   * which the run's aborted signal settles at once, so their approval_resolved comes first.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#asking]);
  }

  riskOf(tool: string): ToolRisk {
    const manifest =
      this.router.toolManifest(tool) ??
      this.env.registry.tool(tool) ??
      this.env.capabilities.lookup(tool)?.tool;
    // Unknown to us: an MCP tool reached by fallthrough before its list was indexed. Assume it changes things.
    return manifest ? (manifest.risk ?? "read") : "exec";
  }

  /**
   * Carry out one action. Every event so far is stored first (the action the model sent is
   * in its model_response): when the store failed, this throws `events_not_stored` and
   * nothing runs, so no action goes without a trace.
   */
  async dispatch(action: ToolAction, step: number, options: DispatchOptions = {}): Promise<StepOutcome> {
    if (this.#closed) throw new CapgateError("run_ended", "This run has ended; it takes no more actions.");
    await this.options.emitter.stored();
    const args = action.arguments;
    switch (action.name) {
      case "capability_search":
        return this.#search(String(args.query), typeof args.limit === "number" ? args.limit : 5, step);
      case "capability_load":
        return this.#load(String(args.name), step);
      case "capability_call":
        return this.#call(
          String(args.tool),
          (args.arguments ?? {}) as Record<string, unknown>,
          step,
          options,
        );
      case "goal_update":
        return this.#goalUpdate(args, step);
      case "memory_search":
        return this.#memorySearch(String(args.query), typeof args.limit === "number" ? args.limit : 5, step);
      case "verify":
        return this.#verify(args, step);
      case "finish":
        return this.#finish(
          String(args.summary),
          typeof args.evidence === "string" ? args.evidence : undefined,
          step,
        );
      case "mark_impossible": {
        const reason = String(args.reason);
        const attempts = Array.isArray(args.attempts) ? args.attempts.map(String) : [];
        this.options.emitter.emit({ type: "marked_impossible", step, reason, attempts });
        return {
          result: "Marked impossible.",
          success: true,
          end: { outcome: "impossible", summary: reason },
        };
      }
      default:
        return { result: `Unknown action '${action.name}'.`, success: false };
    }
  }

  #search(query: string, limit: number, step: number): StepOutcome {
    const hits = this.env.registry
      .search(query, { limit: limit + 10 })
      .filter((h) => this.#visible(h.capability))
      .slice(0, limit);
    this.options.emitter.emit({
      type: "capability_searched",
      step,
      query,
      limit,
      hits: hits.map((h) => ({
        capability: h.capability,
        score: h.score,
        tools: h.tools.map((t) => t.name),
      })),
    });
    if (hits.length === 0) {
      return {
        result: `No capability matches "${query}". Try other words for what you need to do.`,
        success: true,
      };
    }
    this.#lastHits = new Map(hits.map((h) => [h.capability, h.tools.map((t) => t.name)]));
    return {
      result: searchReply(query, hits, new Set(this.router.loaded())),
      success: true,
    };
  }

  #load(name: string, step: number): StepOutcome {
    const manifest = this.#visible(name) ? this.env.registry.get(name) : undefined;
    if (!manifest) {
      const names = this.env.registry
        .list()
        .map((m) => m.name)
        .filter((n) => this.#visible(n));
      const error = `No capability named '${name}'. Known: ${names.join(", ")}. Use capability_search to find one.`;
      this.options.emitter.emit({ type: "capability_loaded", step, name, ok: false, signatures: [], error });
      return { result: error, success: false };
    }
    this.router.load(manifest);
    // The tools the last search ranked for this capability first: the ones the model was looking for.
    const signatures = orderedSignatures(manifest, this.#lastHits.get(name));
    this.options.emitter.emit({ type: "capability_loaded", step, name, ok: true, signatures });
    return { result: loadReply(name, signatures, undefined, this.#instructionsOf(name)), success: true };
  }

  /** The `instructions` an MCP server sent at initialize, for the reply that loads its capability. */
  #instructionsOf(capability: string): { server: string; text: string } | undefined {
    if (!capability.startsWith("mcp:")) return undefined;
    const server = capability.slice("mcp:".length);
    const features = this.mcp as { serverInstructions?: (server: string) => string | undefined } | undefined;
    const text = features?.serverInstructions?.(server);
    return text ? { server, text } : undefined;
  }

  /** Tool calls made so far in this run (a script's nested calls included). */
  get toolCalls(): number {
    return this.#toolCalls;
  }

  /** Count one call against the run's budget; throws `budget_exhausted` when it is spent. */
  #takeToolCall(tool: string): void {
    const max = this.options.maxToolCalls ?? this.env.maxToolCalls;
    if (max !== undefined && this.#toolCalls >= max)
      throw new CapgateError(
        "budget_exhausted",
        `${tool} was not called: this run has used its ${max} tool calls (a script's calls count too).`,
      );
    this.#toolCalls++;
  }

  /**
   * The service a tool (script.run) calls other tools through: the path below, each call
   * traced as nested in this one, counted against the run's budget and, when it reached a
   * write or exec handler, against the verification gate.
   */
  #nestedCalls(ctx: ToolContext, step: number, parentTool: string): ToolContext["services"]["calls"] {
    const { emitter } = this.options;
    let index = 0;
    const observer: NestedCallObserver = {
      begin: ({ tool, arguments: args, risk }) => {
        this.#takeToolCall(tool);
        const parent = { step, tool: parentTool, index: ++index };
        emitter.emit({ type: "tool_called", step, tool, arguments: recordedArguments(args), risk, parent });
        const started = Date.now();
        return (end) => {
          if (end.rejected === undefined && STATE_CHANGING.has(risk)) this.#lastChangeStep = step;
          emitter.emit({
            type: "tool_result",
            step,
            tool,
            parent,
            success: end.result.success && end.rejected === undefined,
            summary: end.result.summary,
            via: end.via,
            ...(end.server ? { server: end.server } : {}),
            ...(end.rejected ? { rejected: end.rejected } : {}),
            durationMs: Date.now() - started,
          });
        };
      },
    };
    return createToolCallService({
      env: this.env,
      context: ctx,
      scope: { isToolLoaded: (t) => this.router.isToolLoaded(t), tools: () => this.#loadedTools() },
      mcp: this.options.mcp,
      mcpCaller: this.mcp,
      riskOf: (t) => this.riskOf(t),
      observer,
    });
  }

  #loadedTools() {
    return this.router
      .loadedManifests()
      .flatMap((m) => m.tools)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async #call(
    tool: string,
    toolArgs: Record<string, unknown>,
    step: number,
    options: DispatchOptions = {},
  ): Promise<StepOutcome> {
    const { emitter } = this.options;
    const risk = this.riskOf(tool);
    emitter.emit({ type: "tool_called", step, tool, arguments: recordedArguments(toolArgs), risk });
    const started = Date.now();
    const signal = options.signal
      ? AbortSignal.any([this.options.signal, options.signal])
      : this.options.signal;
    const base = { ...this.toolContext(), signal };
    const ctx: ToolContext = {
      ...base,
      services: { ...base.services, calls: this.#nestedCalls(base, step, tool) },
    };
    let traced = 0;
    const onProgress = (progress: McpProgress) => {
      // A server may report as often as it likes: the trace keeps the first reports, the client gets all.
      if (traced++ < MAX_TRACED_PROGRESS && !emitter.ended)
        emitter.emit({
          type: "tool_progress",
          step,
          tool,
          progress: progress.progress,
          ...(progress.total !== undefined ? { total: progress.total } : {}),
          ...(progress.message !== undefined ? { message: progress.message.slice(0, 500) } : {}),
        });
      options.onProgress?.(progress);
    };
    let result: ToolResult;
    let via: "native" | "mcp" | "none" = "none";
    let server: string | undefined;
    let rejected: string | undefined;
    try {
      this.#takeToolCall(tool);
      const out = await executeCapabilityStep(
        { tool, arguments: toolArgs },
        {
          native: () =>
            executeTool(tool, toolArgs, {
              ...ctx,
              capabilities: this.env.capabilities,
              loaded: this.router,
              hostEnv: withHostPath,
            }),
          mcp:
            this.options.mcp && this.mcp
              ? approvingMcpCaller(this.mcp, ctx, (t) => this.riskOf(t))
              : undefined,
          signal,
          onProgress,
        },
      );
      result = out.result;
      via = out.via;
      server = out.server;
    } catch (error) {
      if (!CapgateError.isInstance(error)) throw error;
      rejected = error.code;
      const where = error.property ? ` (at \`${error.property}\`)` : "";
      result = { success: false, summary: `${error.code}${where}: ${error.message}` };
    }
    if (rejected === undefined && STATE_CHANGING.has(risk)) this.#lastChangeStep = step;
    const rich = this.#rich(result, step);
    emitter.emit({
      type: "tool_result",
      step,
      tool,
      success: result.success,
      summary: result.summary,
      via,
      ...(server ? { server } : {}),
      ...(rejected ? { rejected } : {}),
      durationMs: Date.now() - started,
      ...(rich.traced ? { content: rich.traced } : {}),
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    });
    const status = rejected ? "rejected" : result.success ? "ok" : "failed";
    return {
      result: [`${tool} → ${status}`, result.summary, ...rich.lines].join("\n"),
      success: result.success && !rejected,
      ...(rich.images.length > 0 ? { images: rich.images } : {}),
      ...(result.content ? { content: result.content } : {}),
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
      ...warningsOf(result),
      ...(server ? { server } : {}),
    };
  }

  /** Binary content to files under the run's directory; text lines saying what and where for the model. */
  #rich(
    result: ToolResult,
    step: number,
  ): { traced?: TracedContent[]; lines: string[]; images: StepImage[] } {
    const lines: string[] = [];
    let traced: TracedContent[] | undefined;
    let images: StepImage[] = [];
    if (Array.isArray(result.content) && result.content.length > 0) {
      const store = this.env.store as {
        saveAttachment?: (runId: string, name: string, bytes: Uint8Array) => string;
      };
      const runId = this.options.emitter.runId;
      const out = externaliseContent(
        result.content,
        step,
        store.saveAttachment ? (name, bytes) => store.saveAttachment!(runId, name, bytes) : undefined,
      );
      traced = out.traced;
      lines.push(...out.lines);
      images = out.images;
    }
    const structured = structuredLine(result.structuredContent, this.env.limits.outputBytes);
    // The MCP summary already is the structured JSON when a result had no text.
    if (structured && !result.summary.includes(JSON.stringify(result.structuredContent)))
      lines.push(structured);
    return { ...(traced ? { traced } : {}), lines, images };
  }

  #goalUpdate(args: Record<string, unknown>, step: number): StepOutcome {
    const s = this.goalState;
    if (typeof args.status === "string") s.status = args.status as GoalState["status"];
    if (Array.isArray(args.plan)) s.plan = args.plan.map(String);
    if (typeof args.progress === "string") s.progress = args.progress;
    const notes =
      typeof args.note === "string" ? [args.note] : Array.isArray(args.note) ? args.note.map(String) : [];
    s.notes.push(...notes);
    if (s.notes.length > 50) s.notes.splice(0, s.notes.length - 50);
    for (const text of notes) {
      void this.env.memory?.remember({
        text,
        tags: ["goal_note"],
        source: "goal_note",
        runId: this.options.emitter.runId,
      });
    }
    this.options.emitter.emit({ type: "goal_updated", step, update: args, state: structuredClone(s) });
    return { result: "Goal state updated.", success: true };
  }

  async #memorySearch(query: string, limit: number, step: number): Promise<StepOutcome> {
    const memory = this.env.memory;
    const hits = memory ? await memory.search(query, limit) : [];
    this.options.emitter.emit({
      type: "memory_searched",
      step,
      query,
      hits: hits.map((h) => ({ id: h.id, text: h.text, score: h.score })),
    });
    if (!memory) return { result: "Memory is not available in this host.", success: false };
    if (hits.length === 0) return { result: `Nothing remembered matches "${query}".`, success: true };
    return { result: hits.map((h) => `- [${h.id}] ${h.text}`).join("\n"), success: true };
  }

  async #verify(args: Record<string, unknown>, step: number): Promise<StepOutcome> {
    const claim = String(args.claim);
    const command = String(args.command);
    const timeoutMs = typeof args.timeout_ms === "number" ? args.timeout_ms : this.env.limits.timeoutMs;
    const outcome = await runVerify({ command, timeoutMs, ctx: this.toolContext() });
    this.options.emitter.emit({
      type: "verified",
      step,
      claim,
      command,
      passed: outcome.passed,
      exitCode: outcome.exitCode,
      outputTail: outcome.outputTail,
      durationMs: outcome.durationMs,
      ...(outcome.denied ? { denied: outcome.denied } : {}),
    });
    if (outcome.passed) this.#lastVerifyPassStep = step;
    if (outcome.denied) return { result: `verify was refused: ${outcome.denied}`, success: false };
    const verdict = outcome.passed ? "PASSED" : "FAILED";
    return {
      result: `verify ${verdict} (exit ${outcome.exitCode ?? "none"}${outcome.timedOut ? ", timed out" : ""}): ${claim}\n${outcome.outputTail}`,
      success: outcome.passed,
    };
  }

  #finish(summary: string, evidence: string | undefined, step: number): StepOutcome {
    const reason = this.#finishRefusal();
    if (reason) {
      this.options.emitter.emit({ type: "finish_refused", step, reason });
      return { result: `finish refused: ${reason}`, success: false };
    }
    this.options.emitter.emit({ type: "finished", step, summary, ...(evidence ? { evidence } : {}) });
    return { result: "Finished.", success: true, end: { outcome: "finished", summary } };
  }

  #finishRefusal(): string | undefined {
    const change = this.#lastChangeStep;
    const pass = this.#lastVerifyPassStep;
    if (this.options.verifyGate === "after-change" && change === undefined) return undefined;
    if (pass === undefined) {
      return change === undefined
        ? "no verify has passed. Run verify with a command whose success proves the goal is met, then finish."
        : `you changed files or processes at step ${change} and no verify has passed since. Run verify with a command that proves the change works, then finish.`;
    }
    if (change !== undefined && change > pass) {
      return `the last passing verify (step ${pass}) is older than your last change (step ${change}). Verify again, then finish.`;
    }
    return undefined;
  }
}

/** Schema warnings an MCP result carries in `data` (see @capgate/mcp-client CallChecks). */
function warningsOf(result: ToolResult): { warnings?: string[] } {
  const data = (typeof result.data === "object" && result.data !== null ? result.data : {}) as Record<
    string,
    unknown
  >;
  const list = [data.schemaWarnings, data.outputSchemaProblems]
    .flatMap((v) => (Array.isArray(v) ? v : []))
    .filter((v): v is string => typeof v === "string")
    .map((w) => `warning: ${w}`);
  return list.length > 0 ? { warnings: list } : {};
}

/** The hook's answer, or a rejection as soon as the call's signal aborts (a hook that ignores the signal cannot hold the run's end). */
function untilAborted<T>(answer: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(new ApprovalUnansweredError("the run was stopped before anyone answered", "abort"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
