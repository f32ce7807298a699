import {
  chatOnTerminal,
  createSpinner,
  printRunEvents,
  terminalApprover,
  terminalElicitation,
} from "@capgate/host/terminal";
import { type GlobalOptions, openHarness } from "../context.js";
import type { CliIO } from "../io.js";

export interface ChatOptions {
  model?: string;
  profile?: string;
  workspace?: string;
  approval?: string;
  quiet?: boolean;
  json?: boolean;
}

/** `capgate chat`: the chat loop on the terminal (@capgate/host/terminal's chatOnTerminal). */
export async function chatCommand(options: ChatOptions, global: GlobalOptions, io: CliIO): Promise<number> {
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
  try {
    await chatOnTerminal(io, chat, { json, spinner });
  } finally {
    await chat.close();
    await harness.close();
  }
  return 0;
}
