import type { ToolManifest } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { requestEffect, toolEffect } from "./intent.js";

describe("requestEffect", () => {
  it.each([
    ["Create an incident for the Website service", "change"],
    ["please add a note to incident 12", "change"],
    ["Can you acknowledge incident 456?", "change"],
    ["I'd like to book a table for two", "change"],
    ["let's delete the old branch", "change"],
    ["Show me all escalation policies", "read"],
    ["could you list the open pull requests", "read"],
    ["Which teams is Sara a member of?", "read"],
    ["what's on my calendar", "read"],
  ])("%s → %s", (text, effect) => {
    expect(requestEffect(text)).toBe(effect);
  });

  it.each([
    "high urgency incidents for the website",
    "how do I create an incident",
    "run an aggregation on the orders collection",
    "the incident from yesterday, please create it again",
    "",
    "   ",
  ])("says nothing for %j (no opening verb of either list)", (text) => {
    expect(requestEffect(text)).toBeUndefined();
  });
});

describe("toolEffect", () => {
  const tool = (extra: Partial<ToolManifest>): ToolManifest => ({
    name: "s/t",
    description: "d",
    inputSchema: { type: "object" },
    ...extra,
  });

  it("an MCP tool: its readOnlyHint only — the risk capgate assumes without one says nothing", () => {
    expect(toolEffect(tool({ risk: "exec", annotations: { readOnlyHint: true } }), true)).toBe("read");
    expect(toolEffect(tool({ risk: "exec", annotations: { readOnlyHint: false } }), true)).toBe("change");
    expect(toolEffect(tool({ risk: "exec" }), true)).toBeUndefined();
    expect(toolEffect(tool({ risk: "exec", annotations: { readOnlyHint: "yes" } }), true)).toBeUndefined();
  });

  it("a manifest's own tool: its declared risk, none when undeclared", () => {
    expect(toolEffect(tool({ risk: "read" }), false)).toBe("read");
    expect(toolEffect(tool({ risk: "network" }), false)).toBe("read");
    expect(toolEffect(tool({ risk: "write" }), false)).toBe("change");
    expect(toolEffect(tool({ risk: "exec" }), false)).toBe("change");
    expect(toolEffect(tool({}), false)).toBeUndefined();
  });
});
