import { describe, expect, it } from "vitest";
import { APPROVAL_TEXT_CHARS, approvalText, visibleText } from "./approval-text.js";

const write = (args: Record<string, unknown>, description?: string) =>
  approvalText({ tool: "fs.write", risk: "write", arguments: args, ...(description ? { description } : {}) });

describe("visibleText", () => {
  it("escapes control, bidi and invisible format characters, keeping newline and tab", () => {
    expect(visibleText("a\u001b[2Jb\u202ec\u2066d\u2069\u200e\u200f\u061c\u200b\ufeff\u2028\n\te")).toBe(
      "a\\u001b[2Jb\\u202ec\\u2066d\\u2069\\u200e\\u200f\\u061c\\u200b\\ufeff\\u2028\n\te",
    );
    expect(visibleText("tag\u{e0041}")).toBe("tag\\ue0041");
    expect(visibleText("plain text, ünïcödé, 日本")).toBe("plain text, ünïcödé, 日本");
  });
});

describe("approvalText", () => {
  it("shows the tool, its risk and each argument on its own line", () => {
    expect(
      write({ path: "a.txt", content: "hello" }, 'fs.write (write) {"path":"a.txt","content":"hello"}'),
    ).toBe(["fs.write (write)", "arguments:", '  path: "a.txt"', '  content: "hello"'].join("\n"));
  });

  it("shows a path that comes after 5,000 characters of content, before the content", () => {
    const text = write({ content: "harmless readme text. ".repeat(230), path: "run-me.sh" });
    const lines = text.split("\n");
    expect(lines[2]).toBe('  path: "run-me.sh"');
    expect(lines[3]).toMatch(/^ {2}content: "harmless readme text\. .*… \([\d,]+ more characters\)$/);
    expect(text).toContain("approve only if you have read them another way");
    expect(text.length).toBeLessThan(APPROVAL_TEXT_CHARS + 300);
  });

  it("cuts long values each on its own, so none pushes another out of view", () => {
    const text = write({ a: "x".repeat(9000), b: "y".repeat(9000), to: "z".repeat(130) });
    expect(text).toMatch(/ {2}to: "z{130}"\n/);
    expect(text).toMatch(/ {2}a: "x+… \(\d[\d,]* more characters\)/);
    expect(text).toMatch(/ {2}b: "y+… \(\d[\d,]* more characters\)/);
    expect(text.length).toBeLessThan(APPROVAL_TEXT_CHARS + 300);
  });

  it("escapes a right-to-left override in an argument, its name and the description", () => {
    const text = approvalText({
      tool: "fs.write",
      risk: "write",
      arguments: { path: "evil\u202etxt.sh", "k\u202e": 1 },
      description: "`touch \u202e` matches the configured ask rule",
    });
    expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    expect(text).toContain('path: "evil\\u202etxt.sh"');
    expect(text).toContain('"k\\u202e": 1');
    expect(text).toContain("`touch \\u202e` matches the configured ask rule");
  });

  it("keeps a description that says more than the tool and its arguments, on one line", () => {
    expect(
      approvalText({
        tool: "shell.run",
        risk: "exec",
        arguments: { command: "rm -rf build" },
        description: 'rm deletes files:\nthe configured ask rule "rm"',
      }),
    ).toBe(
      [
        "shell.run (exec)",
        'rm deletes files: the configured ask rule "rm"',
        "arguments:",
        '  command: "rm -rf build"',
      ].join("\n"),
    );
  });

  it("never cuts inside an escape, and counts arguments beyond the first hundred", () => {
    const text = write({ path: "\u202e".repeat(2000) });
    expect(text).toMatch(/(\\u202e)+… \([\d,]+ more characters\)/);
    const many = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`k${i}`, i]));
    expect(write(many)).toContain("… and 50 more arguments not shown");
  });
});
