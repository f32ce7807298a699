import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunEvent } from "@capgate/loop";
import { describe, expect, it } from "vitest";
import { runChecks } from "./checks.js";
import type { Task, TaskCheck } from "./types.js";

const workspace = mkdtempSync(join(tmpdir(), "capgate-eval-checks-"));
writeFileSync(join(workspace, "a.txt"), "hello world\n");
const values = { workspace, task: workspace, scratch: workspace, node: process.execPath };
const task = (check: TaskCheck[]): Task => ({
  id: "t",
  goal: "g",
  tags: [],
  check,
  dir: workspace,
  file: join(workspace, "t.yaml"),
});
const base = { runId: "r", time: "" };
const events: RunEvent[] = [
  {
    ...base,
    seq: 1,
    type: "tool_called",
    step: 1,
    tool: "memory/create_entities",
    arguments: { entities: [{ name: "x" }], extra: 1 },
    risk: "exec",
  },
  {
    ...base,
    seq: 2,
    type: "tool_result",
    step: 1,
    tool: "memory/create_entities",
    success: true,
    summary: "ok",
    via: "mcp",
    durationMs: 1,
  },
  {
    ...base,
    seq: 3,
    type: "tool_called",
    step: 2,
    tool: "fs.write",
    arguments: { path: "b" },
    risk: "write",
  },
  {
    ...base,
    seq: 4,
    type: "tool_result",
    step: 2,
    tool: "fs.write",
    success: false,
    summary: "denied",
    via: "native",
    durationMs: 1,
  },
];

async function passed(check: TaskCheck, evs: RunEvent[] = events): Promise<boolean> {
  const [outcome] = await runChecks(task([check]), { workspace, values, events: evs });
  return outcome!.passed;
}

describe("checks", () => {
  it("file: equals, contains, matches, exists", async () => {
    expect(await passed({ file: "a.txt", equals: "hello world\n" })).toBe(true);
    expect(await passed({ file: "a.txt", equals: "hello world" })).toBe(false);
    expect(await passed({ file: "a.txt", contains: ["hello", "world"] })).toBe(true);
    expect(await passed({ file: "a.txt", contains: ["hello", "moon"] })).toBe(false);
    expect(await passed({ file: "a.txt", matches: "^hello\\s" })).toBe(true);
    expect(await passed({ file: "missing.txt" })).toBe(false);
    expect(await passed({ file: "missing.txt", exists: false })).toBe(true);
    expect(await passed({ file: "a.txt", exists: false })).toBe(false);
  });

  it("command: exit 0 passes, anything else fails with the output's tail", async () => {
    expect(await passed({ command: "grep -q hello a.txt" })).toBe(true);
    const [failed] = await runChecks(task([{ command: "echo nope >&2; exit 3" }]), {
      workspace,
      values,
      events,
    });
    expect(failed).toMatchObject({ passed: false, detail: "exit 3: nope" });
  });

  it("toolCall: by name, with an argument subset, and successful unless told otherwise", async () => {
    expect(await passed({ toolCall: "memory/create_entities" })).toBe(true);
    expect(
      await passed({ toolCall: "memory/create_entities", arguments: { entities: [{ name: "x" }] } }),
    ).toBe(true);
    expect(await passed({ toolCall: "memory/create_entities", arguments: { entities: [] } })).toBe(false);
    expect(await passed({ toolCall: "fs.write" })).toBe(false);
    expect(await passed({ toolCall: "fs.write", success: false })).toBe(true);
    expect(await passed({ toolCall: "fs.read" })).toBe(false);
    expect(await passed({ toolCall: "memory/create_entities" }, [])).toBe(false);
  });
});
