import type { SamplingHandler } from "@capgate/mcp-client";
import type { ChatMessage, ModelClient } from "@capgate/models";

/** Why a sampling request was refused, as the MCP server sees it (a JSON-RPC error message). */
export class SamplingRefused extends Error {
  readonly code = -32603;
  constructor(message: string) {
    super(message);
    this.name = "SamplingRefused";
  }
}

function textOf(content: unknown, index: number): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((block) => {
      const b = block as { type?: unknown; text?: unknown };
      if (b?.type === "text" && typeof b.text === "string") return b.text;
      throw new SamplingRefused(
        `Sampling here takes text only; message ${index} has ${String(b?.type ?? "unknown")} content.`,
      );
    })
    .join("\n");
}

/**
 * Answers an MCP server's `sampling/createMessage` with a capgate ModelClient (the run's
 * model). Only servers whose config entry says `"sampling": true` ever get here (the pool
 * does not declare the capability to the others). Text in, text out; `maxTokens` and
 * stop sequences are the server's wish, not enforced by every provider.
 */
export function modelSamplingHandler(model: () => ModelClient | undefined): SamplingHandler {
  return async ({ server, params, signal }) => {
    const m = model();
    if (!m)
      throw new SamplingRefused(
        `No model is available for sampling (MCP server '${server}'): start a run or set "model" in capgate.config.json.`,
      );
    const messages: ChatMessage[] = params.messages.map((message, i) => ({
      role: message.role,
      content: textOf(message.content, i),
    }));
    const system = [
      params.systemPrompt ?? "",
      `You are answering a request from the MCP server '${server}'. Reply with text only.`,
    ]
      .filter(Boolean)
      .join("\n\n");
    const result = await m.generate({ system, messages, signal });
    return {
      role: "assistant",
      content: { type: "text", text: result.text },
      model: m.describe?.() ?? "capgate",
      stopReason: result.finishReason === "length" ? "maxTokens" : "endTurn",
    };
  };
}
