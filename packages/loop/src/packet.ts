import { signatureFromSchema, topLevelTools } from "@capgate/schema";
import type { GoalState } from "./events.js";
import { loadedToolsBlock } from "./replies.js";
import type { StepImage } from "./rich-content.js";

export const BASE_INSTRUCTIONS = [
  "You are an agent working through a capability gate. You act only through the eight top-level tools below.",
  'Each reply is exactly one JSON object: {"name": "<top-level tool>", "arguments": {…}} — no prose, no second object.',
  "Concrete tools (files, shell, git, web, browser, desktop, MCP servers, workers) are reached by capability_search → capability_load → capability_call, using the exact argument names of the signatures you are shown.",
].join("\n");

/** Exposed mode's opening: the same rules as the gate's, for tools called directly by name. */
export const EXPOSED_INSTRUCTIONS = [
  "You are an agent with the tools below; call each one directly by its name.",
  'Each reply is exactly one JSON object: {"name": "<tool>", "arguments": {…}} — no prose, no second object.',
  "Use the exact tool names and argument names of the signatures you are shown.",
].join("\n");

/** The fixed suffix; SPEC §9 requires it to end with these words. */
export const PACKET_SUFFIX =
  "Call only tools whose signatures you can see, fix the cause of each error instead of repeating a call, keep changes small, and do not finish without verification evidence.";

export interface PacketStep {
  /** The action as the model sent it (canonical JSON). */
  action: string;
  /** What the gate answered. */
  result: string;
  /** Images the result carried; only the newest step's go to the model (as image parts, for providers that read them). */
  images?: StepImage[];
}

export interface PacketInput {
  promptDelta: string;
  loadedSignatures: string[];
  goal: string;
  goalState?: GoalState;
  steps: PacketStep[];
  charBudget: number;
  /** Conversation before this turn (chat loop), oldest first. */
  history?: Array<{ role: "user" | "assistant"; content: string }>;
  /** Replaces the goal's heading, e.g. "User message" in chat. */
  goalLabel?: string;
  /**
   * Exposed mode: the listing of every tool offered directly (see `exposedSurface`). The
   * system prompt lists these instead of the eight tools, and the listing does not count
   * against `charBudget`, so the steps get the room they would get in gate mode.
   */
  exposedTools?: string;
}

export interface ContextPacket {
  system: string;
  /** `images` sits on the user message that answers the newest step, when its result had images. */
  messages: Array<{ role: "user" | "assistant"; content: string; images?: StepImage[] }>;
  /** Steps left out (oldest first) to stay within the budget. */
  droppedSteps: number;
  totalChars: number;
}

let topSignaturesCache: string | undefined;
function topLevelSignatures(): string {
  topSignaturesCache ??= topLevelTools()
    .map((t) => `- ${signatureFromSchema(t.name, t.inputSchema)} — ${t.description}`)
    .join("\n");
  return topSignaturesCache;
}

/** Most characters the loaded tools' signatures take in the system part, unless the packet's budget says less. */
export const LOADED_TOOLS_CHARS = 12_000;

/**
 * The system part: instructions, the profile's delta, the eight top-level tools, and the
 * loaded tools' signatures within `loadedChars` (a capability of an MCP server may hold
 * thousands: the rest are counted, and capability_search shows them).
 */
export function systemPrompt(
  promptDelta: string,
  loadedSignatures: string[],
  loadedChars = LOADED_TOOLS_CHARS,
): string {
  const loaded = loadedToolsBlock(loadedSignatures, loadedChars);
  return [
    BASE_INSTRUCTIONS,
    promptDelta,
    PACKET_SUFFIX,
    `Top-level tools:\n${topLevelSignatures()}`,
    `Loaded tools (call with capability_call):\n${loaded}`,
  ].join("\n\n");
}

/** The system part in exposed mode: every tool listed directly, no search. */
export function exposedSystemPrompt(promptDelta: string, listing: string): string {
  return [EXPOSED_INSTRUCTIONS, promptDelta, PACKET_SUFFIX, `Tools:\n${listing}`].join("\n\n");
}

function renderGoalState(state: GoalState | undefined): string {
  if (!state) return "";
  const parts: string[] = [];
  if (state.status) parts.push(`status: ${state.status}`);
  if (state.plan && state.plan.length > 0)
    parts.push(`plan:\n${state.plan.map((p, i) => `  ${i + 1}. ${p}`).join("\n")}`);
  if (state.progress) parts.push(`progress: ${state.progress}`);
  if (state.notes.length > 0) parts.push(`notes:\n${state.notes.map((n) => `  - ${n}`).join("\n")}`);
  return parts.length > 0 ? `\n\nGoal state:\n${parts.join("\n")}` : "";
}

const length = (m: { content: string }[]) => m.reduce((n, x) => n + x.content.length, 0);

/**
 * Build the packet for one model call and keep it within `charBudget`: the system
 * part and the goal are never cut; the oldest steps (then the oldest history) are
 * dropped first, and an oversized result is shortened before anything newer goes.
 */
export function buildContextPacket(input: PacketInput): ContextPacket {
  // A quarter of the budget at most for the loaded tools, so the steps keep room.
  const system =
    input.exposedTools === undefined
      ? systemPrompt(
          input.promptDelta,
          input.loadedSignatures,
          Math.min(LOADED_TOOLS_CHARS, Math.max(2_000, Math.floor(input.charBudget / 4))),
        )
      : exposedSystemPrompt(input.promptDelta, input.exposedTools);
  const charBudget = input.charBudget + (input.exposedTools?.length ?? 0);
  const label = input.goalLabel ?? "Goal";
  const goalMessage = {
    role: "user" as const,
    content: `${label}: ${input.goal}${renderGoalState(input.goalState)}`,
  };

  const history = [...(input.history ?? [])];
  const stepMessages = (steps: PacketStep[]) =>
    steps.flatMap((s, i) => [
      { role: "assistant" as const, content: s.action },
      {
        role: "user" as const,
        content: s.result,
        // Pictures cost context: only the newest result's go along; older ones stay described in text.
        ...(i === steps.length - 1 && s.images && s.images.length > 0 ? { images: s.images } : {}),
      },
    ]);
  let steps = [...input.steps];
  let dropped = 0;
  const fixed = system.length + goalMessage.content.length;
  const total = () => fixed + length(history) + length(stepMessages(steps)) + (dropped > 0 ? 60 : 0);

  // 1. Shorten oversized old results first (keep their head and tail).
  const perResult = Math.max(400, Math.floor((charBudget - fixed) / 4));
  steps = steps.map((s, i) =>
    i < steps.length - 1 && s.result.length > perResult
      ? {
          ...s,
          result: `${s.result.slice(0, perResult / 2)}\n…[shortened]…\n${s.result.slice(-perResult / 2)}`,
        }
      : s,
  );
  // 2. Drop the oldest steps, then the oldest history, keeping at least the newest step.
  while (total() > charBudget && steps.length > 1) {
    steps.shift();
    dropped++;
  }
  while (total() > charBudget && history.length > 0) history.shift();
  // 3. Last resort: shorten the newest result itself.
  if (total() > charBudget && steps.length === 1) {
    const only = steps[0] as PacketStep;
    const room = Math.max(200, only.result.length - (total() - charBudget));
    if (room < only.result.length) {
      steps = [
        {
          ...only,
          result: `${only.result.slice(0, room / 2)}\n…[shortened]…\n${only.result.slice(-room / 2)}`,
        },
      ];
    }
  }

  const note =
    dropped > 0
      ? [{ role: "user" as const, content: `[${dropped} earlier step(s) omitted to fit the context budget]` }]
      : [];
  const messages = [...history, goalMessage, ...note, ...stepMessages(steps)];
  // Providers want alternating roles; merge consecutive user messages.
  const merged: ContextPacket["messages"] = [];
  for (const m of messages) {
    const last = merged[merged.length - 1];
    if (last && last.role === m.role) {
      last.content += `\n\n${m.content}`;
      const images = (m as { images?: StepImage[] }).images;
      if (images) last.images = [...(last.images ?? []), ...images];
    } else merged.push({ ...m });
  }
  return { system, messages: merged, droppedSteps: dropped, totalChars: system.length + length(merged) };
}
