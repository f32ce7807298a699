import { describe, expect, it } from "vitest";
import { EventEmitterForRun } from "./events.js";
import { buildContextPacket } from "./packet.js";
import { REPLY_CHARS } from "./replies.js";
import { newRunId } from "./run-id.js";
import { Session } from "./session.js";
import { makeEnv, testProfiles } from "./test-support/env.js";

// An MCP server's list as the registry indexes it: 10,000 tools, one about tides.
const schema = {
  type: "object",
  properties: { region: { type: "string" }, days: { type: "integer" } },
  required: ["region"],
};
const tools = [
  ...Array.from({ length: 10_000 }, (_, i) => ({
    name: `weather_${String(i).padStart(5, "0")}`,
    description: `Weather forecast for region ${i}: temperature, wind and rain.`,
    inputSchema: schema,
  })),
  {
    name: "tide_tables",
    description: "Tide tables: high and low water times for a harbour.",
    inputSchema: { type: "object", properties: { harbour: { type: "string" } }, required: ["harbour"] },
  },
];

function session() {
  const { env, workspace } = makeEnv();
  env.registry.registerMcpServer("hostile", tools);
  const s = new Session({
    env,
    emitter: new EventEmitterForRun(newRunId(), () => {}),
    workspace,
    signal: new AbortController().signal,
    mcp: true,
    verifyGate: "after-change",
  });
  s.applyProfile(testProfiles.Orchestrator!);
  return s;
}

const search = (s: Session, query: string) =>
  s.dispatch({ name: "capability_search", arguments: { query } }, 1).then((o) => o.result);
const load = (s: Session, name: string) =>
  s.dispatch({ name: "capability_load", arguments: { name } }, 2).then((o) => o.result);

describe("capability_search and capability_load replies stay within a budget", () => {
  it("a search matching 10,000 tools lists the best ones with signatures, the count of the rest, and how to see them", async () => {
    const reply = await search(session(), "weather forecast");
    expect(reply.length).toBeLessThanOrEqual(REPLY_CHARS);
    expect(reply).toMatch(
      /^Best tools for "weather forecast":\n {2}hostile\/weather_\d{5}\(region: string, days\?: integer\)/,
    );
    expect(reply).toMatch(/^mcp:hostile — Tools of the MCP server "hostile"\.$/m);
    const more = reply.match(/^ {2}… (\d+) more of its 10001 tools \(all callable once loaded\): (.*)$/m);
    expect(more?.[2]).toBe(
      'capability_search {"query":"mcp:hostile <what the tool does>"} lists the best matches first, with signatures',
    );
    const shown = reply.split("\n").filter((l) => /^ {2}hostile\/weather_\d{5}\(/.test(l)).length;
    expect(shown).toBeGreaterThan(20);
    expect(shown - 1 + Number(more?.[1])).toBe(10_001);
  });

  it("load lists the tools the last search ranked first, then counts the rest; the narrower search the reply suggests finds any of them", async () => {
    const s = session();
    await search(s, "tide tables harbour");
    const reply = await load(s, "mcp:hostile");
    expect(reply.length).toBeLessThanOrEqual(REPLY_CHARS);
    expect(reply.split("\n").slice(0, 2)).toEqual([
      "Loaded mcp:hostile. Call its tools with capability_call:",
      "  hostile/tide_tables(harbour: string)",
    ]);
    expect(reply).toMatch(
      /\n {2}… \d+ more of its 10001 tools, all loaded and callable: capability_search \{"query":"mcp:hostile <what the tool does>"\} lists the best matches first, with signatures$/,
    );
    const narrow = await search(s, "mcp:hostile weather_09876");
    expect(narrow).toContain("  hostile/weather_09876(region: string, days?: integer)");
    expect(narrow.length).toBeLessThanOrEqual(REPLY_CHARS);
  });

  it("native capabilities read as before: every tool, no count", async () => {
    const s = session();
    expect(await load(s, "notes")).toBe(
      "Loaded notes. Call its tools with capability_call:\n  notes.read(path: string)\n  notes.write(path: string, text: string)",
    );
  });

  it("the context packet keeps a loaded 10,000-tool capability within the budget, counting the tools it leaves out", () => {
    const signatures = Array.from(
      { length: 10_000 },
      (_, i) => `hostile/weather_${i}(region: string, days?: integer)`,
    );
    const packet = buildContextPacket({
      promptDelta: "Plan.",
      loadedSignatures: signatures,
      goal: "Get the weather",
      steps: [],
      charBudget: 24_000,
    });
    expect(packet.totalChars).toBeLessThanOrEqual(24_000);
    expect(packet.system).toMatch(/\n- … \d+ more loaded tools, callable as they are: capability_search/);
  });
});
