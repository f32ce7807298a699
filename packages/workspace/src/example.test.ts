import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapabilitySet, createToolContext, executeTool } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import { capability } from "../examples/word-count-capability.js";

describe("the authoring guide's example capability", () => {
  it("counts, and refuses a path outside the workspace", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "wordcount-"));
    writeFileSync(join(workspace, "notes.txt"), "one two three\nfour\n");
    const ctx = {
      ...createToolContext({ workspace }),
      capabilities: new CapabilitySet([capability]),
      loaded: { isToolLoaded: () => true },
    };
    expect((await executeTool("wordcount.file", { path: "notes.txt" }, ctx)).summary).toBe(
      "notes.txt: 2 lines, 4 words, 19 characters",
    );
    await expect(executeTool("wordcount.file", { path: "../etc/passwd" }, ctx)).rejects.toMatchObject({
      code: "policy_denied",
    });
  });
});
