import { ModelError } from "./errors.js";
import { checkRequest } from "./request.js";
import { abortedError } from "./retry.js";
import type { ChatMessage, CreatedModel, GenerateRequest, GenerateResult, ToolDefinition } from "./types.js";

/** One scripted reply: the raw text, or `{ "text": "…" }`. */
export type ScriptedReply = string | { text: string };

/** What a scripted model was asked, kept so tests and demos can check it. */
export interface ScriptedCall {
  system: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
}

export interface ScriptedModel extends CreatedModel {
  readonly provider: "scripted";
  /** Every request answered so far, in order. */
  readonly calls: readonly ScriptedCall[];
  /** Replies not yet used. */
  readonly remaining: number;
}

export interface ScriptedModelOptions {
  /** Shown in messages and describe(); `scripted:<file>` sets it to the file path. */
  name?: string;
}

/**
 * A model that replays fixed replies in order — for tests, demos and reproducing a trace.
 * Running out is an error (`scripted_exhausted`) rather than a silent repeat.
 */
export function createScriptedModel(
  replies: readonly ScriptedReply[],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const name = options.name ?? "(in memory)";
  const texts = checkReplies(replies, name, "replies");
  const calls: ScriptedCall[] = [];
  let next = 0;
  const label = `scripted model ${name}`;

  async function generate(request: GenerateRequest): Promise<GenerateResult> {
    checkRequest(request, false);
    if (request.signal?.aborted) throw abortedError(request.signal, label, 0, undefined);
    if (next >= texts.length) {
      throw new ModelError(
        "scripted_exhausted",
        `${label} has no reply ${next + 1}: the script has ${texts.length}.`,
        { property: `[${next}]` },
      );
    }
    calls.push({
      system: request.system,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(request.tools ? { tools: request.tools } : {}),
    });
    const text = texts[next]!;
    next++;
    return { text };
  }

  return {
    provider: "scripted",
    model: name,
    nativeTools: false,
    get calls() {
      return calls;
    },
    get remaining() {
      return texts.length - next;
    },
    generate,
    describe: () => `scripted:${name} (${texts.length} ${texts.length === 1 ? "reply" : "replies"})`,
  };
}

/**
 * Reads `file` as a JSON array of replies. Node-only, reached through
 * `process.getBuiltinModule` so importing this package pulls no `node:fs` into a browser bundle.
 */
export function loadScriptedModel(file: string, cwd?: string): ScriptedModel {
  const proc = (globalThis as { process?: NodeJS.Process }).process;
  const fs = proc?.getBuiltinModule?.("node:fs");
  const path = proc?.getBuiltinModule?.("node:path");
  if (!fs || !path) {
    throw new ModelError(
      "scripted_invalid",
      `scripted:${file} needs Node.js ≥ 20.16 to read the file; use createScriptedModel(replies) elsewhere.`,
      {
        property: "model",
      },
    );
  }
  const resolved = path.resolve(cwd ?? proc!.cwd(), file);
  let source: string;
  try {
    source = fs.readFileSync(resolved, "utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT"
        ? "does not exist"
        : `cannot be read (${(error as Error).message})`;
    throw new ModelError("scripted_invalid", `Scripted model file ${resolved} ${reason}.`, {
      property: "model",
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (error) {
    throw new ModelError(
      "scripted_invalid",
      `Scripted model file ${resolved} is not valid JSON: ${jsonProblem(error as Error, source)}. It must be a JSON array of replies (strings or { "text": "…" }).`,
      { property: "model", cause: error },
    );
  }
  if (!Array.isArray(parsed)) {
    throw new ModelError(
      "scripted_invalid",
      `Scripted model file ${resolved} must hold a JSON array of replies (strings or { "text": "…" }); it holds ${kind(parsed)}.`,
      { property: "model" },
    );
  }
  checkReplies(parsed, resolved, "");
  return createScriptedModel(parsed as ScriptedReply[], { name: resolved });
}

function checkReplies(replies: readonly unknown[], name: string, base: string): string[] {
  if (!Array.isArray(replies)) {
    throw new ModelError(
      "scripted_invalid",
      `A scripted model takes an array of replies; got ${kind(replies)}.`,
      {
        property: base || "replies",
      },
    );
  }
  return replies.map((reply, i) => {
    if (typeof reply === "string") return reply;
    const at = `${base}[${i}]`;
    const ok =
      typeof reply === "object" &&
      reply !== null &&
      !Array.isArray(reply) &&
      typeof (reply as { text?: unknown }).text === "string";
    if (!ok) {
      throw new ModelError(
        "scripted_invalid",
        `Scripted model ${name}: element ${i} is ${kind(reply)}; each reply must be a string or { "text": "…" }.`,
        { property: at },
      );
    }
    const extra = Object.keys(reply as object).filter((k) => k !== "text");
    if (extra.length > 0) {
      throw new ModelError(
        "scripted_invalid",
        `Scripted model ${name}: element ${i} has unexpected ${extra.length === 1 ? "property" : "properties"} ${extra.map((k) => `"${k}"`).join(", ")}; an object reply is exactly { "text": "…" }.`,
        { property: `${at}.${extra[0]}` },
      );
    }
    return (reply as { text: string }).text;
  });
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    const text = (value as { text?: unknown }).text;
    return text === undefined ? 'an object without "text"' : `an object whose "text" is ${kind(text)}`;
  }
  const shown = JSON.stringify(value);
  return `a ${typeof value} (${shown !== undefined && shown.length > 40 ? `${shown.slice(0, 40)}…` : shown})`;
}

/** The parser's complaint plus line and column, which Node's message lacks on some versions. */
function jsonProblem(error: Error, source: string): string {
  const match = /position (\d+)/.exec(error.message);
  if (!match) return error.message;
  const offset = Number(match[1]);
  const before = source.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${error.message} (line ${line}, column ${column})`;
}
