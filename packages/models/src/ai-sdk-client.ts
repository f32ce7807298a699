import {
  type generateText as GenerateText,
  generateText,
  type JSONSchema7,
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  type ToolSet,
  tool,
} from "ai";
import { classifyError } from "./classify-error.js";
import type { ResolvedOptions } from "./options.js";
import { checkRequest } from "./request.js";
import { withRetries } from "./retry.js";
import type {
  ChatMessage,
  CreatedModel,
  GenerateRequest,
  GenerateResult,
  ModelToolCall,
  ProviderName,
  TokenUsage,
} from "./types.js";

type ProviderOptions = NonNullable<Parameters<typeof GenerateText>[0]["providerOptions"]>;

export interface AiSdkClientConfig {
  provider: Exclude<ProviderName, "scripted">;
  model: string;
  languageModel: LanguageModel;
  options: ResolvedOptions;
  /** One line for logs, without secrets. */
  description: string;
  keyEnvVar: string;
  baseUrlEnvVar: string;
  /** Provider-specific settings, e.g. turning off parallel tool calls when tools are sent. */
  providerOptions: (withTools: boolean) => ProviderOptions | undefined;
}

/**
 * A ModelClient over one AI SDK language model. The SDK's own retries are off
 * (`maxRetries: 0`): ours are configurable, jittered, capped, honour `retry-after` and stop
 * on abort mid-wait — see docs/models.md.
 */
export function createAiSdkClient(config: AiSdkClientConfig): CreatedModel {
  const { options } = config;
  const label = `${config.provider}:${config.model}`;
  const classify = (error: unknown, timedOut: boolean) =>
    classifyError(error, timedOut, {
      label,
      keyEnvVar: config.keyEnvVar,
      baseUrlEnvVar: config.baseUrlEnvVar,
      timeoutMs: options.retry.timeoutMs,
    });

  async function generate(request: GenerateRequest): Promise<GenerateResult> {
    checkRequest(request, options.nativeTools);
    const tools = options.nativeTools && request.tools?.length ? toToolSet(request.tools) : undefined;
    const providerOptions = config.providerOptions(tools !== undefined);
    return withRetries(
      async (signal) => {
        try {
          const result = await generateText({
            model: config.languageModel,
            ...(request.system === "" ? {} : { system: request.system }),
            messages: request.messages.map(toModelMessage),
            abortSignal: signal,
            maxRetries: 0,
            ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
            ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
            ...(tools === undefined ? {} : { tools, toolChoice: options.toolChoice }),
            ...(providerOptions === undefined ? {} : { providerOptions }),
          });
          const first = result.toolCalls[0];
          return toResult(
            result.text,
            first ? { name: first.toolName, arguments: first.input } : undefined,
            result.usage,
            result.finishReason,
          );
        } catch (error) {
          // A server that ignores tool_choice "required" (several local ones do) answers in
          // text; hand that text to the caller's parser rather than failing the step.
          const violation = toolChoiceViolation(error);
          if (violation) return toResult(violation.text, undefined, undefined, violation.finishReason);
          throw error;
        }
      },
      options.retry,
      { label, signal: request.signal, classify },
    );
  }

  return {
    provider: config.provider,
    model: config.model,
    nativeTools: options.nativeTools,
    generate,
    describe: () => config.description,
  };
}

/**
 * The AI SDK's ToolChoiceViolationError (recent 6.x), recognised by name rather than imported
 * so an older 6.x, which never throws it, still loads.
 */
function toolChoiceViolation(error: unknown): { text: string; finishReason?: string } | undefined {
  if (!(error instanceof Error) || error.name !== "AI_ToolChoiceViolationError") return undefined;
  const { content, finishReason } = error as Error & { content?: unknown; finishReason?: unknown };
  const parts = Array.isArray(content) ? (content as Array<{ type?: unknown; text?: unknown }>) : [];
  const text = parts
    .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .join("");
  return { text, ...(typeof finishReason === "string" ? { finishReason } : {}) };
}

function toToolSet(definitions: NonNullable<GenerateRequest["tools"]>): ToolSet {
  const set: ToolSet = {};
  for (const definition of definitions) {
    // No `execute` and no validator: the SDK only carries the call back; the loop's strict
    // parser and ajv validation judge it, exactly as for a text reply.
    set[definition.name] = tool({
      description: definition.description,
      inputSchema: jsonSchema(definition.inputSchema as JSONSchema7),
    });
  }
  return set;
}

function toResult(
  text: string,
  toolCall: ModelToolCall | undefined,
  usage:
    | {
        inputTokens?: number | undefined;
        outputTokens?: number | undefined;
        totalTokens?: number | undefined;
      }
    | undefined,
  finishReason: string | undefined,
): GenerateResult {
  const tokens = toUsage(usage);
  return {
    // The canonical action, so a native call and a text reply reach the same strict parser.
    text: toolCall ? JSON.stringify({ name: toolCall.name, arguments: toolCall.arguments }) : text,
    ...(toolCall ? { toolCall } : {}),
    ...(tokens ? { usage: tokens } : {}),
    ...(finishReason ? { finishReason } : {}),
  };
}

function toUsage(
  usage:
    | {
        inputTokens?: number | undefined;
        outputTokens?: number | undefined;
        totalTokens?: number | undefined;
      }
    | undefined,
): TokenUsage | undefined {
  if (!usage) return undefined;
  const { inputTokens, outputTokens } = usage;
  const totalTokens =
    usage.totalTokens ??
    (inputTokens !== undefined && outputTokens !== undefined ? inputTokens + outputTokens : undefined);
  if (inputTokens === undefined && outputTokens === undefined && totalTokens === undefined) return undefined;
  return {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
    ...(totalTokens === undefined ? {} : { totalTokens }),
  };
}

/** A message for the AI SDK: a user message with images becomes text + image parts (openai and anthropic read them). */
function toModelMessage(message: ChatMessage): ModelMessage {
  if (message.role === "user" && message.images && message.images.length > 0)
    return {
      role: "user",
      content: [
        { type: "text", text: message.content },
        ...message.images.map((image) => ({
          type: "image" as const,
          image: image.data,
          mediaType: image.mimeType,
        })),
      ],
    };
  return { role: message.role, content: message.content };
}
