import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createHarness } from "@capgate/harness";
import { createScriptedModel } from "@capgate/models";
import { afterAll, describe, expect, it } from "vitest";
import { chatOnTerminal } from "./chat-repl.js";
import type { TerminalIO } from "./io.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-chat-repl-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const action = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

describe("chatOnTerminal", () => {
  it("sends messages, runs the slash commands, names an unknown one, and stops at /exit", async () => {
    const workspace = join(root, "ws");
    mkdirSync(workspace);
    const harness = await createHarness({
      workspace,
      stateDir: join(root, "state"),
      processEnv: { HOME: root },
    });
    const out: string[] = [];
    const err: string[] = [];
    const io: TerminalIO = {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      color: false,
      interactive: false,
    };
    const chat = harness.createChat({
      model: createScriptedModel([action("finish", { summary: "the answer" })], { name: "chat" }),
    });
    try {
      const input = Readable.from([
        "hello\n/profile Nope\n/profile Researcher\n/bogus\n/tools\n\n/exit\nnot read\n",
      ]);
      await chatOnTerminal(io, chat, { input });
      expect(out[0]).toContain("capgate chat · profile");
      expect(out).toContain("the answer");
      expect(out.some((l) => l.startsWith("profile Researcher · loaded"))).toBe(true);
      expect(out.some((l) => l.includes("web.fetch(url: string"))).toBe(true);
      expect(err.some((l) => l.includes("Nope"))).toBe(true);
      expect(err.some((l) => l.startsWith("unknown command /bogus"))).toBe(true);
      expect(chat.profile).toBe("Researcher");
    } finally {
      await chat.close();
      await harness.close();
    }
  });

  it("with json, replies and profile switches are JSON lines", async () => {
    const workspace = join(root, "ws-json");
    mkdirSync(workspace);
    const harness = await createHarness({
      workspace,
      stateDir: join(root, "state"),
      processEnv: { HOME: root },
    });
    const out: string[] = [];
    const io: TerminalIO = {
      out: (t) => out.push(t),
      err: () => undefined,
      color: false,
      interactive: false,
    };
    const chat = harness.createChat({
      model: createScriptedModel([action("finish", { summary: "json answer" })], { name: "chat" }),
    });
    try {
      await chatOnTerminal(io, chat, { json: true, input: Readable.from(["/profile Coder\nhi\n"]) });
      expect(out.map((l) => JSON.parse(l) as { type: string })).toEqual([
        expect.objectContaining({ type: "chat_profile", profile: "Coder" }),
        { type: "chat_reply", outcome: "answered", reply: "json answer" },
      ]);
    } finally {
      await chat.close();
      await harness.close();
    }
  });
});
