import type { ToolManifest } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { parameterText } from "./parameter-text.js";
import { Registry } from "./registry.js";

const tool = (properties: Record<string, unknown>): ToolManifest =>
  ({
    name: "t.run",
    description: "Do it.",
    inputSchema: { type: "object", additionalProperties: false, properties },
  }) as ToolManifest;

describe("parameterText", () => {
  it("is each argument's name and description, one a line", () => {
    expect(
      parameterText(
        tool({ path: { type: "string", description: "The file to read." }, offset: { type: "integer" } }),
      ),
    ).toBe("path: The file to read.\noffset\n");
  });

  it("is empty without properties and ignores descriptions that are not text", () => {
    expect(parameterText(tool({}))).toBe("");
    expect(parameterText({ ...tool({}), inputSchema: { type: "object" } } as ToolManifest)).toBe("");
    expect(parameterText(tool({ q: { type: "string", description: 42 } }))).toBe("q\n");
  });

  it("stops at 1,000 characters however large the schema", () => {
    const many: Record<string, unknown> = {};
    for (let i = 0; i < 500; i++) many[`arg${i}`] = { type: "string", description: "x".repeat(50) };
    expect(parameterText(tool(many)).length).toBe(1000);
  });
});

describe("Registry: arguments are searched", () => {
  const repo = {
    name: "tracker",
    version: "1.0.0",
    description: "Work items.",
    profileFit: [],
    tools: [
      {
        name: "tracker.open",
        description: "Open a new item.",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { assignee: { type: "string", description: "Username of the teammate responsible." } },
        },
      },
      {
        name: "tracker.close",
        description: "Close an item.",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { reason: { type: "string" } },
        },
      },
    ],
  };
  const other = {
    name: "notes",
    version: "1.0.0",
    description: "Write notes.",
    profileFit: [],
    tools: [
      {
        name: "notes.add",
        description: "Add a note.",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { text: { type: "string" } },
        },
      },
    ],
  };

  it("finds a tool by words only its argument's description has, at both levels", () => {
    const r = new Registry();
    r.register(repo as never);
    r.register(other as never);
    const hit = r.search("teammate responsible")[0];
    expect(hit?.capability).toBe("tracker");
    expect(hit?.match).toBe("ranked");
    expect(hit?.tools[0]?.name).toBe("tracker.open");
    expect(r.search("teammate responsible", { level: "tool" })[0]?.tool).toBe("tracker.open");
  });
});
