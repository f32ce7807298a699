import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness } from "@capgate/harness";
import type { RunEvent } from "@capgate/loop";
import { describe, expect, it } from "vitest";
import { describeEvent, PLAIN_TEXT } from "../event-text.js";
import { scriptedIO } from "../test-support/scripted-io.js";
import { terminalApprover } from "./approver.js";

const request = {
  approvalId: "ap",
  runId: "r",
  tool: "fs.write",
  capability: "fs",
  risk: "write" as const,
  arguments: { path: "a.txt" },
  argumentsHash: "0".repeat(64),
  description: "fs.write a.txt",
  // Asked because of the approval mode, so "always for this run" may answer it.
  grantable: true,
};

describe("the terminal approver", () => {
  it("y allows this call, a allows the tool for the rest of the run, anything else denies; the answer says the CLI decided", async () => {
    const signal = new AbortController().signal;
    const io = scriptedIO(["y", "a", "always", "n", ""]);
    const approve = terminalApprover(io);
    expect(await approve(request, signal)).toEqual({ approved: true, decidedBy: "cli" });
    expect(await approve(request, signal)).toEqual({ approved: true, scope: "run", decidedBy: "cli" });
    expect(await approve(request, signal)).toEqual({ approved: true, scope: "run", decidedBy: "cli" });
    expect(await approve(request, signal)).toEqual({ approved: false, decidedBy: "cli" });
    expect(await approve(request, signal)).toEqual({ approved: false, decidedBy: "cli" });
    expect(io.asked[0]).toContain("[y/N/a = always for this run]");
  });

  it("a question the call's stop withdraws is answered as not allowed, and says so", async () => {
    // Found by an outside review of code mode: a script stopped while its nested call's
    // question was open waited for the person to answer before script.run could end.
    const controller = new AbortController();
    const errs: string[] = [];
    const approve = terminalApprover({
      out: () => undefined,
      err: (line: string) => errs.push(line),
      color: false,
      interactive: true,
      prompt: (_question: string, signal?: AbortSignal) =>
        new Promise<string>((_resolve, reject) => {
          signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        }),
    });
    const answered = approve(request, controller.signal);
    setTimeout(() => controller.abort(), 20);
    expect(await answered).toEqual({ approved: false, decidedBy: "cli" });
    expect(errs.at(-1)).toContain("withdrawn: the call was stopped before an answer; not allowed");
  });

  it("a configured rule's question (not grantable) offers y/N only, and shows the whole arguments, escaped", async () => {
    const io = scriptedIO(["a", "y"]);
    const errs: string[] = [];
    const approve = terminalApprover({ ...io, err: (line: string) => errs.push(line) });
    const ruled = {
      ...request,
      tool: "shell.run",
      grantable: false,
      arguments: { command: `echo ${"ok ".repeat(80)}; touch X\u202e` },
      description: '`echo ok …` matches the configured ask rule "echo"',
    };
    expect(await approve(ruled, new AbortController().signal)).toEqual({ approved: false, decidedBy: "cli" });
    expect(io.asked[0]).toMatch(/\[y\/N\] $/);
    // The part the description cut is on the arguments line, and the format character is escaped.
    expect(errs.join("\n")).toContain("; touch X\\u202e");
    expect(errs.join("\n")).not.toContain("\u202e");
    expect(await approve(ruled, new AbortController().signal)).toEqual({ approved: true, decidedBy: "cli" });
  });

  it("shows every argument on its own line, the short ones first, as the MCP form does", async () => {
    const io = scriptedIO(["n", "n", "n"]);
    const approve = terminalApprover(io);
    const ordinary = {
      ...request,
      arguments: { path: "a.txt", content: "hello" },
      description: 'fs.write (write) {"path":"a.txt","content":"hello"}',
    };
    expect(await approve(ordinary, new AbortController().signal)).toEqual({
      approved: false,
      decidedBy: "cli",
    });
    expect(io.errors).toEqual([
      "  fs.write (write)",
      "  arguments:",
      '    path: "a.txt"',
      '    content: "hello"',
    ]);
    expect(io.asked[0]).toBe("? allow fs.write (write) [y/N/a = always for this run] ");
    // A long content first cannot push the path out of view; the description's raw bidi character never shows.
    io.errors.length = 0;
    const hidden = { content: "A harmless README. ".repeat(263), path: "run-me\u202e.sh" };
    const json = JSON.stringify(hidden);
    await approve(
      { ...request, arguments: hidden, description: `fs.write (write) ${json.slice(0, 197)}...` },
      new AbortController().signal,
    );
    const shown = io.errors.join("\n");
    expect(io.errors[2]).toBe('    path: "run-me\\u202e.sh"');
    expect(shown).toMatch(/content: "A harmless README\. .*… \([\d,]+ more characters\)/);
    expect(`${shown}${io.asked[1]}`).not.toContain("\u202e");
    // A rule's reason quoting what the model wrote is escaped too (it was printed raw in the prompt).
    io.errors.length = 0;
    const reason = '`touch X\u202e` matches the configured ask rule "touch"';
    await approve(
      {
        ...request,
        tool: "shell.run",
        risk: "exec",
        arguments: { command: "touch X\u202e" },
        description: reason,
      },
      new AbortController().signal,
    );
    expect(io.errors[1]).toBe('  `touch X\\u202e` matches the configured ask rule "touch"');
    expect(`${io.errors.join("\n")}${io.asked[2]}`).not.toContain("\u202e");
  });

  it("a direct call (no run to reach) offers y/N only, and 'a' is not a yes there", async () => {
    const io = scriptedIO(["a"]);
    const approve = terminalApprover(io, undefined, undefined, false);
    expect(await approve(request, new AbortController().signal)).toEqual({
      approved: false,
      decidedBy: "cli",
    });
    expect(io.asked[0]).toMatch(/\[y\/N\] $/);
  });

  it("'a' in a run: later calls of that tool run unasked, another tool still asks, and the trace says who decided", async () => {
    const root = mkdtempSync(join(tmpdir(), "capgate-approver-"));
    const replies = join(root, "replies.json");
    const call = (tool: string, args: Record<string, unknown>) =>
      JSON.stringify({ name: "capability_call", arguments: { tool, arguments: args } });
    writeFileSync(
      replies,
      JSON.stringify([
        call("fs.write", { path: "one.txt", content: "1" }),
        call("fs.write", { path: "two.txt", content: "2" }),
        call("fs.read", { path: "two.txt" }),
        JSON.stringify({ name: "mark_impossible", arguments: { reason: "done" } }),
      ]),
    );
    const harness = await createHarness({ workspace: root, stateDir: join(root, "state") });
    try {
      const io = scriptedIO(["a", "n"]);
      const events: RunEvent[] = [];
      await harness.runGoal({
        goal: "write two files",
        profile: "Coder",
        model: `scripted:${replies}`,
        approval: "always",
        approve: terminalApprover(io),
        onEvent: (e) => events.push(e),
      });
      expect(io.asked.map((q) => /allow (\S+)/.exec(q)?.[1])).toEqual(["fs.write", "fs.read"]);
      expect(readFileSync(join(root, "two.txt"), "utf8")).toBe("2");
      const lines = events
        .filter((e) => e.type === "approval_resolved")
        .map((e) => describeEvent(e, PLAIN_TEXT));
      const grant = events.find((e) => e.type === "approval_requested")?.approvalId;
      expect(lines).toEqual([
        "  approved for the rest of the run by cli",
        `✓ allowed fs.write by grant:${grant}`,
        "  denied by cli",
      ]);
    } finally {
      await harness.close();
    }
  }, 60_000);
});
