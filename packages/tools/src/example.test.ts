import { describe, expect, it } from "vitest";
import { capability, main } from "../examples/text-stats-capability.js";
import { CapabilitySet } from "./capability-set.js";
import { executeTool } from "./execute.js";
import { createToolContext } from "./tool-context.js";

describe("the README's capability on the contract alone", () => {
  it("counts, and its policy refuses before the handler runs", async () => {
    expect(await main()).toBe("2 lines, 4 words, 19 characters");
    const ctx = {
      ...createToolContext({ workspace: "/" }),
      capabilities: new CapabilitySet([capability]),
      loaded: { isToolLoaded: () => true },
    };
    await expect(executeTool("textstats.count", { text: "x".repeat(1_000_001) }, ctx)).rejects.toMatchObject({
      code: "policy_denied",
      property: "text",
    });
  });
});
