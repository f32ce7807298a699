import { describe, expect, it } from "vitest";
import { scriptedIO } from "../test-support/scripted-io.js";
import { terminalElicitation } from "./elicitation.js";

const params = {
  mode: "form" as const,
  message: "Deploy settings?",
  requestedSchema: {
    type: "object" as const,
    properties: {
      region: { type: "string" as const, enum: ["eu", "us"], default: "eu" },
      replicas: { type: "integer" as const, minimum: 1 },
      dryRun: { type: "boolean" as const, default: true },
    },
    required: ["replicas"],
  },
};
const request = { server: "deploy", params, signal: new AbortController().signal };

describe("the terminal elicitation form", () => {
  it("asks each field, re-asks a bad answer, leaves defaults to the client, then sends", async () => {
    // region: Enter (keep the default) · replicas: "zero" (re-asked) then 0 (below minimum) then 2 · dryRun: n · send: Enter
    const io = scriptedIO(["", "zero", "0", "2", "n", ""]);
    const answer = await terminalElicitation(io)(request);
    expect(answer).toEqual({ action: "accept", content: { replicas: 2, dryRun: false } });
    expect(io.asked[0]).toContain("region (1) eu 2) us, default eu)");
    expect(io.asked[1]).toContain("replicas (integer, required)");
    expect(io.errors.join("\n")).toContain("MCP server deploy asks: Deploy settings?");
    expect(io.errors.join("\n")).toContain("Enter a whole number.");
    expect(io.errors.join("\n")).toContain("At least 1.");
  });

  it("declines or cancels when the person says so at the end", async () => {
    expect(await terminalElicitation(scriptedIO(["", "3", "", "d"]))(request)).toEqual({ action: "decline" });
    expect(await terminalElicitation(scriptedIO(["", "3", "", "c"]))(request)).toEqual({ action: "cancel" });
  });

  it("declines without a terminal, and says why", async () => {
    const io = { ...scriptedIO([]), interactive: false };
    expect(await terminalElicitation(io)(request)).toEqual({ action: "decline" });
    expect(io.asked).toEqual([]);
    expect(io.errors.join("\n")).toContain("declined: no terminal to ask on");
  });
});
