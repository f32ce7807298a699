import { createInterface } from "node:readline";
import { createSpinner, printRunEvents, terminalApprover, terminalElicitation } from "@capgate/host/terminal";
import { type GlobalOptions, openHarness } from "../context.js";
import { type CliIO, paint } from "../io.js";
import { printJsonLine } from "../json.js";

export interface ChatOptions {
  model?: string;
  profile?: string;
  workspace?: string;
  approval?: string;
  quiet?: boolean;
  json?: boolean;
}

const HELP =
  "/profile NAME — switch profile (clears loaded tools)  ·  /tools — loaded tools  ·  /exit — quit";

/** `capgate chat`: the chat loop as a REPL. Lines from a pipe work too (one message per line). */
export async function chatCommand(options: ChatOptions, global: GlobalOptions, io: CliIO): Promise<number> {
  const p = paint(io);
  const json = options.json === true;
  const spinner = createSpinner(io, !json);
  const harness = await openHarness(
    global,
    {
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.approval ? { approval: options.approval } : {}),
    },
    {
      io,
      approve: terminalApprover(io, () => spinner.stop()),
      onElicitation: terminalElicitation(io, () => spinner.stop()),
    },
  );
  const chat = harness.createChat({
    ...(options.model ? { model: options.model } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    // --json: the chat is an event stream, one JSON object per line (replies are `chat_reply`).
    onEvent: printRunEvents(io, {
      json,
      spinner,
      thinking: () => "thinking…",
      hide: (e) =>
        options.quiet === true || e.type === "finished" || e.type === "run_started" || e.type === "run_ended",
      dim: true,
    }),
  });
  if (!json) io.out(p.dim(`capgate chat · profile ${chat.profile} · ${HELP}`));
  const rl = createInterface({
    input: process.stdin,
    output: io.interactive ? process.stdout : undefined,
    terminal: io.interactive,
  });
  let turn: AbortController | undefined;
  rl.on("SIGINT", () => {
    if (turn) turn.abort();
    else rl.close();
  });
  const prompt = () => {
    if (!io.interactive) return;
    rl.setPrompt(p.bold("› "));
    rl.prompt();
  };
  prompt();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === "") {
        prompt();
        continue;
      }
      if (line === "/exit" || line === "/quit") break;
      if (line === "/help") {
        io.out(HELP);
      } else if (line === "/tools") {
        const sigs = chat.loadedSignatures();
        io.out(sigs.length > 0 ? sigs.join("\n") : p.dim("nothing loaded"));
      } else if (line.startsWith("/profile")) {
        const name = line.slice("/profile".length).trim();
        try {
          const loaded = chat.setProfile(name);
          if (json) printJsonLine(io, { type: "chat_profile", profile: chat.profile, loaded });
          else io.out(p.magenta(`profile ${chat.profile} · loaded ${loaded.join(", ") || "nothing"}`));
        } catch (error) {
          io.err(p.red((error as Error).message));
        }
      } else if (line.startsWith("/")) {
        io.err(p.red(`unknown command ${line.split(" ")[0]}`) + p.dim(` — ${HELP}`));
      } else {
        turn = new AbortController();
        const result = await chat.send(line, { signal: turn.signal });
        turn = undefined;
        spinner.stop();
        if (json) printJsonLine(io, { type: "chat_reply", outcome: result.outcome, reply: result.reply });
        else io.out((result.outcome === "answered" ? (s: string) => s : p.yellow)(result.reply));
      }
      prompt();
    }
  } finally {
    spinner.stop();
    rl.close();
    await chat.close();
    await harness.close();
  }
  return 0;
}
