import { resolveOptions } from "./options.js";
import { createAnthropicModel, createOpenAIModel } from "./providers.js";
import { loadScriptedModel } from "./scripted.js";
import { parseModelSpec } from "./spec.js";
import type { CreatedModel, ModelOptions } from "./types.js";

/**
 * Makes a model from a spec string:
 * - `openai:<model>` — OPENAI_API_KEY; with OPENAI_BASE_URL, any OpenAI-compatible server.
 * - `anthropic:<model>` — ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for proxies).
 * - `scripted:<file>` — replays a JSON array of replies.
 *
 * A `?key=value` query sets options (`openai:gpt-4o-mini?nativeTools=true&temperature=0`) and
 * wins over `options`. Everything is checked here, so a bad spec, option, key or script fails
 * now, with the culprit named, not on the first call.
 */
export function createModel(spec: string, options: ModelOptions = {}): CreatedModel {
  const parsed = parseModelSpec(spec);
  const resolved = resolveOptions(options, parsed.query);
  switch (parsed.provider) {
    case "openai":
      return createOpenAIModel(parsed.model, resolved);
    case "anthropic":
      return createAnthropicModel(parsed.model, resolved);
    case "scripted":
      return loadScriptedModel(parsed.model, resolved.cwd);
  }
}
