import { EventEmitterForRun, type LoopEnvironment, newRunId, Session } from "@capgate/loop";
import type { GateHandler, GateToolName } from "@capgate/mcp-client";

export interface GateSession {
  readonly runId: string;
  /** The four gate tools' implementations, for createGateServer from @capgate/mcp-client. */
  readonly handlers: Record<GateToolName, GateHandler>;
  /** Capabilities loaded in this session. */
  loaded(): string[];
  close(): void;
}

/**
 * One gate session for an MCP client: its own router (capabilities it loaded stay
 * loaded), the same executor, policies and MCP fallthrough as the chat loop, and a
 * trace of every call under the state dir.
 */
export function createGateSession(env: LoopEnvironment, workspace: string): GateSession {
  const runId = newRunId();
  const emitter = new EventEmitterForRun(runId, (e) => env.store.append(e));
  const lifetime = new AbortController();
  const session = new Session({
    env,
    emitter,
    workspace,
    signal: lifetime.signal,
    mcp: true,
    verifyGate: "after-change",
  });
  const orchestrator = env.profiles.Orchestrator;
  if (!orchestrator) throw new Error("the Orchestrator profile is missing");
  emitter.emit({
    type: "run_started",
    goal: "(MCP gate session)",
    profile: orchestrator.name,
    model: "mcp-client",
    workspace,
    maxSteps: 0,
    mcp: true,
    kind: "chat",
  });
  session.applyProfile(orchestrator);
  let step = 0;
  const run = (name: GateToolName) => async (args: Record<string, unknown>) => {
    const outcome = await session.dispatch({ name, arguments: normalise(name, args) }, ++step);
    return { success: outcome.success, summary: outcome.result };
  };
  return {
    runId,
    handlers: {
      capability_search: run("capability_search"),
      capability_load: run("capability_load"),
      capability_call: run("capability_call"),
      memory_search: run("memory_search"),
    },
    loaded: () => session.router.loaded(),
    close() {
      lifetime.abort();
      emitter.emit({ type: "run_ended", outcome: "finished", steps: step, rejections: 0 });
    },
  };
}

/** capability_call's tool arguments may sit beside `tool` (the protocol's rule); move them into `arguments`. */
function normalise(name: GateToolName, args: Record<string, unknown>): Record<string, unknown> {
  if (name !== "capability_call" || args.arguments !== undefined) return args;
  const { tool, ...rest } = args;
  return Object.keys(rest).length > 0 ? { tool, arguments: rest } : args;
}
