import type { ModelClient } from "@capgate/models";
import type { ParseError } from "@capgate/schema";
import type { EventEmitterForRun } from "./events.js";
import { takeModelTurn } from "./model-turn.js";
import { buildContextPacket, type PacketInput, type PacketStep } from "./packet.js";
import type { Session, StepOutcome } from "./session.js";
import type { ExposedSurface } from "./surface.js";

export interface ModelStepOptions {
  session: Session;
  emitter: EventEmitterForRun;
  model: ModelClient;
  /** The step number across the run (chat counts on across turns). */
  step: number;
  signal: AbortSignal;
  nativeTools: boolean;
  /** The steps the packet shows; the step taken here is appended to it. */
  steps: PacketStep[];
  /** What the loop adds to the session's state: the goal or the user's message, and chat's history. */
  prompt: Pick<PacketInput, "goal" | "goalLabel" | "history"> & {
    /** Appended to the profile's prompt delta. */
    instructions?: string;
  };
  /** Exposed mode: the tools offered directly (fixed for the run). */
  exposed?: ExposedSurface;
  /** Rejections so far in this run, including this one if it is rejected. */
  rejections: () => number;
}

export type ModelStep =
  | { kind: "failed"; error: unknown }
  | { kind: "rejected"; error: ParseError }
  | { kind: "dispatched"; end?: StepOutcome["end"] };

/**
 * One model step, the same in the goal loop and the chat loop: build the packet from the
 * session's state, take the model's turn, and dispatch the action it sent. The loops keep
 * what differs — when to stop, how an outcome reads, what a rejection streak means.
 */
export async function takeModelStep(options: ModelStepOptions): Promise<ModelStep> {
  const { session, steps, prompt, exposed } = options;
  const packet = buildContextPacket({
    promptDelta: prompt.instructions
      ? `${session.profile.promptDelta} ${prompt.instructions}`
      : session.profile.promptDelta,
    loadedSignatures: session.router.loadedSignatures(),
    goal: prompt.goal,
    ...(prompt.goalLabel !== undefined ? { goalLabel: prompt.goalLabel } : {}),
    goalState: session.goalState,
    steps,
    ...(prompt.history ? { history: prompt.history } : {}),
    charBudget: session.profile.charBudget,
    ...(exposed ? { exposedTools: exposed.listing } : {}),
  });
  const turn = await takeModelTurn({
    emitter: options.emitter,
    model: options.model,
    packet,
    step: options.step,
    signal: options.signal,
    nativeTools: options.nativeTools,
    ...(exposed ? { surface: exposed } : {}),
    rejections: options.rejections,
  });
  if (turn.kind === "failed") return turn;
  if (turn.kind === "rejected") {
    steps.push(turn.step);
    return { kind: "rejected", error: turn.error };
  }
  const target = exposed?.targets.get(turn.action.name);
  const done =
    target === undefined
      ? await session.dispatch(turn.action, options.step)
      : await session.call(target, turn.action.arguments, options.step);
  steps.push({
    action: JSON.stringify(turn.action),
    result: done.result,
    ...(done.images ? { images: done.images } : {}),
  });
  return done.end ? { kind: "dispatched", end: done.end } : { kind: "dispatched" };
}
