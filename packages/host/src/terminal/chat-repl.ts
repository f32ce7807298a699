import { createInterface } from "node:readline";
import type { Chat } from "@capgate/loop";
import { terminalSafe } from "../event-text.js";
import { paint, type TerminalIO } from "./io.js";
import type { Spinner } from "./spinner.js";

export const CHAT_HELP =
  "/profile NAME — switch profile (clears loaded tools)  ·  /tools — loaded tools  ·  /exit — quit";

/**
 * A chat on a terminal, until `/exit` or the end of the input: each line is a message (lines
 * from a pipe work too), or a command — `/profile NAME`, `/tools`, `/help`, `/exit`. Ctrl-C
 * stops the turn in progress, or ends the chat between turns. With `json`, replies and
 * profile switches are JSON lines (`chat_reply`, `chat_profile`). The chat is not closed here.
 */
export async function chatOnTerminal(
  io: TerminalIO,
  chat: Chat,
  options: { json?: boolean; spinner?: Spinner; input?: NodeJS.ReadableStream } = {},
): Promise<void> {
  const p = paint(io);
  const json = options.json === true;
  const rl = createInterface({
    input: options.input ?? process.stdin,
    output: io.interactive ? process.stdout : undefined,
    terminal: io.interactive,
  });
  let turn: AbortController | undefined;
  rl.on("SIGINT", () => (turn ? turn.abort() : rl.close()));
  const prompt = () => {
    if (!io.interactive) return;
    rl.setPrompt(p.bold("› "));
    rl.prompt();
  };
  if (!json) io.out(p.dim(`capgate chat · profile ${chat.profile} · ${CHAT_HELP}`));
  prompt();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === "/exit" || line === "/quit") break;
      if (line === "/help") io.out(CHAT_HELP);
      else if (line === "/tools") {
        const sigs = chat.loadedSignatures();
        io.out(sigs.length > 0 ? sigs.join("\n") : p.dim("nothing loaded"));
      } else if (line.startsWith("/profile")) {
        try {
          const loaded = chat.setProfile(line.slice("/profile".length).trim());
          if (json) io.out(JSON.stringify({ type: "chat_profile", profile: chat.profile, loaded }));
          else io.out(p.magenta(`profile ${chat.profile} · loaded ${loaded.join(", ") || "nothing"}`));
        } catch (error) {
          io.err(p.red((error as Error).message));
        }
      } else if (line.startsWith("/")) {
        io.err(p.red(`unknown command ${line.split(" ")[0]}`) + p.dim(` — ${CHAT_HELP}`));
      } else if (line !== "") {
        turn = new AbortController();
        const result = await chat.send(line, { signal: turn.signal });
        turn = undefined;
        options.spinner?.stop();
        if (json)
          io.out(JSON.stringify({ type: "chat_reply", outcome: result.outcome, reply: result.reply }));
        else
          io.out(
            result.outcome === "answered" ? terminalSafe(result.reply) : p.yellow(terminalSafe(result.reply)),
          );
      }
      prompt();
    }
  } finally {
    options.spinner?.stop();
    rl.close();
  }
}
