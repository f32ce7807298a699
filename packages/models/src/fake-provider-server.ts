// Test support (not exported): a real HTTP server on 127.0.0.1 that speaks just enough of the
// OpenAI and Anthropic wire formats to drive the real AI SDK providers end to end.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** Set when the client hung up before a reply was sent (e.g. it aborted). */
  closedByClient: boolean;
}

export type FakeReply =
  | { status?: number; headers?: Record<string, string>; body?: unknown }
  | { hang: true }
  | { destroy: true };

export interface FakeServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  requests: RecordedRequest[];
  /** Resolves when request number `n` (1-based) has arrived. */
  waitForRequest(n: number): Promise<RecordedRequest>;
  /** Resolves when the client has hung up on request number `n`. */
  waitForClientClose(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeServer(
  respond: (request: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>,
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const waiters: Array<() => void> = [];
  const notify = () => {
    for (const w of waiters.splice(0)) w();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
        closedByClient: false,
      };
      res.on("close", () => {
        if (!res.writableEnded) {
          recorded.closedByClient = true;
          notify();
        }
      });
      requests.push(recorded);
      notify();
      const reply = await respond(recorded, requests.length - 1);
      send(res, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      const tick = () => (check() ? resolve() : waiters.push(tick));
      tick();
    });

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async waitForRequest(n) {
      await until(() => requests.length >= n);
      return requests[n - 1]!;
    },
    async waitForClientClose(n) {
      await until(() => requests[n - 1]?.closedByClient === true);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, reply: FakeReply): void {
  if ("hang" in reply) return;
  if ("destroy" in reply) {
    res.socket?.destroy();
    return;
  }
  const body = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {});
  res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
  res.end(body);
}

// ---- OpenAI Chat Completions -----------------------------------------------------------

export function chatCompletion(options: {
  text?: string | null;
  toolCalls?: Array<{ name: string; arguments: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  model?: string;
  finishReason?: string;
}): FakeReply {
  const toolCalls = options.toolCalls?.map((call, i) => ({
    id: `call_${i}`,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    body: {
      id: "chatcmpl-test",
      object: "chat.completion",
      created: 1_700_000_000,
      model: options.model ?? "test-model",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: options.text === undefined ? null : options.text,
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: options.finishReason ?? (toolCalls ? "tool_calls" : "stop"),
        },
      ],
      ...(options.usage ? { usage: options.usage } : {}),
    },
  };
}

export function openaiError(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): FakeReply {
  return { status, headers, body: { error: { message, type: "test_error", param: null, code: null } } };
}

// ---- OpenAI Responses API --------------------------------------------------------------

export function responsesReply(options: {
  text?: string;
  toolCall?: { name: string; arguments: string };
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
}): FakeReply {
  const output: unknown[] = [];
  if (options.text !== undefined) {
    output.push({
      type: "message",
      role: "assistant",
      id: "msg_1",
      status: "completed",
      content: [{ type: "output_text", text: options.text, annotations: [] }],
    });
  }
  if (options.toolCall) {
    output.push({
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: options.toolCall.name,
      arguments: options.toolCall.arguments,
      status: "completed",
    });
  }
  return {
    body: {
      id: "resp_1",
      object: "response",
      created_at: 1_700_000_000,
      model: "test-model",
      status: "completed",
      output,
      incomplete_details: null,
      ...(options.usage ? { usage: options.usage } : {}),
    },
  };
}

// ---- Anthropic Messages ----------------------------------------------------------------

export function anthropicMessage(options: {
  text?: string;
  toolUse?: { name: string; input: unknown };
  usage?: { input_tokens: number; output_tokens: number };
}): FakeReply {
  const content: unknown[] = [];
  if (options.text !== undefined) content.push({ type: "text", text: options.text });
  if (options.toolUse) {
    content.push({
      type: "tool_use",
      id: "toolu_1",
      name: options.toolUse.name,
      input: options.toolUse.input,
    });
  }
  return {
    body: {
      id: "msg_test",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content,
      stop_reason: options.toolUse ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: options.usage ?? { input_tokens: 0, output_tokens: 0 },
    },
  };
}

export function anthropicError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): FakeReply {
  return { status, headers, body: { type: "error", error: { type, message } } };
}
