// Any OpenAI-compatible server — Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter — through
// `openai:<model>` plus a base URL (OPENAI_BASE_URL or the baseURL option). Local servers need no key.
import { createModel, isModelError } from "../src/index.js";

export async function localServerExample(baseURL = "http://localhost:11434/v1"): Promise<string> {
  const model = createModel("openai:llama3.1:8b?temperature=0", { baseURL, maxRetries: 2 });
  console.log("using", model.describe()); // openai:llama3.1:8b via http://localhost:11434/v1 (chat completions)
  try {
    const reply = await model.generate({
      system: "Answer in one word.",
      messages: [{ role: "user", content: "What is the capital of France?" }],
      signal: AbortSignal.timeout(120_000),
    });
    console.log(reply.text, reply.usage);
    return reply.text;
  } catch (error) {
    if (isModelError(error)) console.error(`${error.code} (HTTP ${error.status ?? "-"}): ${error.message}`);
    throw error;
  }
}
