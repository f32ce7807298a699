import type { ModelClient } from "@capgate/models";
import {
  type JsonSchema,
  type ParseError,
  parseToolAction,
  type ToolAction,
  topLevelTools,
} from "@capgate/schema";
import type { EventEmitterForRun } from "./events.js";
import type { ContextPacket, PacketStep } from "./packet.js";
import type { SurfaceTool } from "./surface.js";

export type ModelTurn =
  | { kind: "action"; action: ToolAction }
  | { kind: "rejected"; error: ParseError; step: PacketStep }
  | { kind: "failed"; error: unknown };

/**
 * One model turn, the same in both loops: emit model_request, call the model, emit
 * model_response, and parse the reply strictly. A rejected reply is recorded
 * (action_rejected) and handed back as the step to feed to the model; nothing runs.
 */
export async function takeModelTurn(options: {
  emitter: EventEmitterForRun;
  model: ModelClient;
  packet: ContextPacket;
  step: number;
  signal: AbortSignal;
  nativeTools: boolean;
  /** The tools offered and the parser's allowed names (exposed mode); default the eight top-level tools. */
  surface?: { tools: SurfaceTool[]; schemas: Record<string, JsonSchema> };
  /** Rejections so far in this run, including this one if it is rejected. */
  rejections: () => number;
}): Promise<ModelTurn> {
  const { emitter, packet, step } = options;
  const tools = options.nativeTools ? (options.surface?.tools ?? topLevelTools()) : undefined;
  emitter.emit({
    type: "model_request",
    step,
    systemChars: packet.system.length,
    messageCount: packet.messages.length,
    totalChars: packet.totalChars,
    droppedSteps: packet.droppedSteps,
    // Native tool definitions are prompt too: counted as their JSON, in every mode alike.
    ...(tools ? { toolsChars: JSON.stringify(tools).length } : {}),
  });
  const started = Date.now();
  let reply: Awaited<ReturnType<ModelClient["generate"]>>;
  try {
    reply = await options.model.generate({
      system: packet.system,
      messages: packet.messages,
      signal: options.signal,
      ...(tools ? { tools } : {}),
    });
  } catch (error) {
    return { kind: "failed", error };
  }
  emitter.emit({
    type: "model_response",
    step,
    text: reply.text,
    durationMs: Date.now() - started,
    ...(reply.usage ? { usage: reply.usage } : {}),
  });
  const parsed = options.surface
    ? parseToolAction(reply.text, options.surface.schemas)
    : parseToolAction(reply.text);
  if (parsed.ok) return { kind: "action", action: parsed.action };
  const { error } = parsed;
  emitter.emit({
    type: "action_rejected",
    step,
    code: error.code,
    message: error.message,
    ...(error.property ? { property: error.property } : {}),
    rejections: options.rejections(),
  });
  const text = reply.text.length > 2000 ? `${reply.text.slice(0, 2000)}…` : reply.text;
  return {
    kind: "rejected",
    error,
    step: { action: text, result: `Rejected (${error.code}): ${error.message}` },
  };
}
