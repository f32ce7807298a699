import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createHarness } from "@capgate/harness";
import { createScriptedModel } from "@capgate/models";
import { afterAll, describe, expect, it } from "vitest";
import { recordingIO } from "../test-support/scripted-io.js";
import { chatOnTerminal } from "./chat-repl.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-chat-repl-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const action = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

/**
 * A real harness in its own workspace, a chat on it whose scripted model answers `reply`, and
 * chatOnTerminal fed `lines`: what went to stdout and stderr, and the chat (closed after).
 */
async function chatWith(name: string, reply: string, lines: string, options: { json?: boolean } = {}) {
  const workspace = join(root, name);
  mkdirSync(workspace);
  const harness = await createHarness({
    workspace,
    stateDir: join(root, "state"),
    processEnv: { HOME: root },
  });
  const { io, out, err } = recordingIO();
  const chat = harness.createChat({
    model: createScriptedModel([action("finish", { summary: reply })], { name: "chat" }),
  });
  try {
    await chatOnTerminal(io, chat, { ...options, input: Readable.from([lines]) });
    return { out, err, profile: chat.profile };
  } finally {
    await chat.close();
    await harness.close();
  }
}

describe("chatOnTerminal", () => {
  it("sends messages, runs the slash commands, names an unknown one, and stops at /exit", async () => {
    const { out, err, profile } = await chatWith(
      "ws",
      "the answer",
      "hello\n/profile Nope\n/profile Researcher\n/bogus\n/tools\n\n/exit\nnot read\n",
    );
    expect(out[0]).toContain("capgate chat · profile");
    expect(out).toContain("the answer");
    expect(out.some((l) => l.startsWith("profile Researcher · loaded"))).toBe(true);
    expect(out.some((l) => l.includes("web.fetch(url: string"))).toBe(true);
    expect(err.some((l) => l.includes("Nope"))).toBe(true);
    expect(err.some((l) => l.startsWith("unknown command /bogus"))).toBe(true);
    expect(profile).toBe("Researcher");
  });

  it("with json, replies and profile switches are JSON lines", async () => {
    const { out } = await chatWith("ws-json", "json answer", "/profile Coder\nhi\n", { json: true });
    expect(out.map((l) => JSON.parse(l) as { type: string })).toEqual([
      expect.objectContaining({ type: "chat_profile", profile: "Coder" }),
      { type: "chat_reply", outcome: "answered", reply: "json answer" },
    ]);
  });
});
