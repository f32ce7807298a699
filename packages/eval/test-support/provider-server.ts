// Test support: a real HTTP server on 127.0.0.1 that speaks the OpenAI Chat Completions and
// Anthropic Messages APIs, answers each run from the suite's scripted solutions, and reports
// token usage the way those APIs do — so an evaluation can be driven through the real providers.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { modelForRun } from "../src/model.js";
import type { Task } from "../src/types.js";

export interface ProviderRequest {
  api: "openai" | "anthropic";
  task: string;
  mode: "gate" | "exposed";
  /** Characters of the system prompt and the messages, as received. */
  chars: number;
  /** Names of the native tools sent, when any were. */
  tools: string[];
  /** The system prompt as received. */
  system: string;
  reply: string;
  usage: { prompt: number; completion: number };
}

export interface ProviderServer {
  /** Base URL with /v1, for OPENAI_BASE_URL. */
  openaiUrl: string;
  /** Origin, for ANTHROPIC_BASE_URL. */
  anthropicUrl: string;
  requests: ProviderRequest[];
  close(): Promise<void>;
}

type Message = { role: string; content: string | Array<{ type: string; text?: string }> };

const text = (c: Message["content"]) =>
  typeof c === "string" ? c : c.map((p) => (p.type === "text" ? (p.text ?? "") : "")).join("");

/**
 * `tasks` are the suite's; `scripts` the `scripted:` directory. A request's run is known by
 * the goal in its first user message and the mode by its system prompt; its step by the
 * number of assistant messages. Usage: a token per 4 characters, rounded up.
 */
export async function startProviderServer(tasks: readonly Task[], scripts: string): Promise<ProviderServer> {
  const requests: ProviderRequest[] = [];
  const answer = async (
    api: ProviderRequest["api"],
    system: string,
    messages: Message[],
    tools: string[],
  ) => {
    const goal = text(messages.find((m) => m.role === "user")?.content ?? "");
    const task = tasks.find((t) => goal.startsWith(`Goal: ${t.goal}`));
    if (!task) throw new Error(`no task for ${goal.slice(0, 80)}`);
    const mode = system.startsWith("You are an agent with the tools below") ? "exposed" : "gate";
    const step = messages.filter((m) => m.role === "assistant").length;
    // A fresh replay of the run's script, advanced to this step.
    const model = modelForRun(`scripted:${scripts}`, { task: task.id, mode }, { cwd: scripts });
    let reply = "";
    for (let i = 0; i <= step; i++)
      reply = (await model.generate({ system: "", messages: [{ role: "user", content: "x" }] })).text;
    const chars = system.length + messages.reduce((n, m) => n + text(m.content).length, 0);
    const usage = { prompt: Math.ceil(chars / 4), completion: Math.ceil(reply.length / 4) };
    requests.push({ api, task: task.id, mode, chars, tools, system, reply, usage });
    return { reply, usage };
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        const send = (status: number, value: unknown) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(value));
        };
        try {
          if (req.url === "/v1/chat/completions") {
            const all = body.messages as Message[];
            const system = text(all.find((m) => m.role === "system")?.content ?? "");
            const tools = ((body.tools as Array<{ function: { name: string } }> | undefined) ?? []).map(
              (t) => t.function.name,
            );
            const { reply, usage } = await answer(
              "openai",
              system,
              all.filter((m) => m.role !== "system"),
              tools,
            );
            const action =
              tools.length > 0 ? (JSON.parse(reply) as { name: string; arguments: unknown }) : undefined;
            send(200, {
              id: "chatcmpl-eval",
              object: "chat.completion",
              created: 1_700_000_000,
              model: String(body.model),
              choices: [
                {
                  index: 0,
                  message: action
                    ? {
                        role: "assistant",
                        content: null,
                        tool_calls: [
                          {
                            id: "call_1",
                            type: "function",
                            function: { name: action.name, arguments: JSON.stringify(action.arguments) },
                          },
                        ],
                      }
                    : { role: "assistant", content: reply },
                  finish_reason: action ? "tool_calls" : "stop",
                },
              ],
              usage: {
                prompt_tokens: usage.prompt,
                completion_tokens: usage.completion,
                total_tokens: usage.prompt + usage.completion,
              },
            });
            return;
          }
          if (req.url === "/v1/messages") {
            const system =
              typeof body.system === "string" ? body.system : text((body.system as Message["content"]) ?? "");
            const { reply, usage } = await answer("anthropic", system, body.messages as Message[], []);
            send(200, {
              id: "msg_eval",
              type: "message",
              role: "assistant",
              model: String(body.model),
              content: [{ type: "text", text: reply }],
              stop_reason: "end_turn",
              stop_sequence: null,
              usage: { input_tokens: usage.prompt, output_tokens: usage.completion },
            });
            return;
          }
          send(404, { error: { message: `no route ${req.url}` } });
        } catch (error) {
          send(500, { error: { message: (error as Error).message } });
        }
      })();
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    openaiUrl: `http://127.0.0.1:${port}/v1`,
    anthropicUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
