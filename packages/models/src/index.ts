export { createModel } from "./create-model.js";
export type { ModelErrorCode, ModelErrorOptions } from "./errors.js";
export { isModelError, ModelError } from "./errors.js";
export { DEFAULT_TIMEOUT_MS } from "./options.js";
export type { ScriptedCall, ScriptedModel, ScriptedModelOptions, ScriptedReply } from "./scripted.js";
export { createScriptedModel } from "./scripted.js";
export type { ParsedModelSpec, SpecQueryOptions } from "./spec.js";
export { parseModelSpec } from "./spec.js";
export type {
  ChatImage,
  ChatMessage,
  CreatedModel,
  GenerateRequest,
  GenerateResult,
  ModelClient,
  ModelOptions,
  ModelToolCall,
  OpenAIApi,
  ProviderName,
  RetryInfo,
  TokenUsage,
  ToolChoiceMode,
  ToolDefinition,
} from "./types.js";
