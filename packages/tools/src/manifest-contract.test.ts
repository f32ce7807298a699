import { describe, expect, it } from "vitest";
import { callContractProblem, manifestContractProblems } from "./manifest-contract.js";

const good = {
  name: "notes",
  version: "0.1.0",
  manifestFormat: 1,
  description: "Keep short text notes in the workspace and read them back later.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "notes.add",
      description: "Add a note to the workspace's notes file.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          text: { type: "string", minLength: 1, maxLength: 1000, description: "The note text." },
        },
        required: ["text"],
      },
    },
  ],
} as const;

describe("manifestContractProblems", () => {
  it("passes a manifest that keeps its contract", () => {
    expect(
      manifestContractProblems(good, { expected: { "notes.add": ["notes.add(text: string)", "write"] } }),
    ).toEqual([]);
  });

  it("names every broken promise", () => {
    const bad = {
      ...good,
      profileFit: ["Poet"],
      tools: [
        {
          ...good.tools[0],
          risk: "read" as const,
          inputSchema: {
            type: "object",
            properties: { text: { type: "string" }, n: { type: "integer", description: "A number." } },
          },
        },
      ],
    };
    const problems = manifestContractProblems(bad, {
      expected: { "notes.add": ["notes.add(text: string)", "write"] },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining("signature is notes.add(text?: string, n?: integer)"),
        expect.stringContaining("risk is read, expected write"),
        expect.stringContaining("unknown profile Poet"),
        expect.stringContaining("must be closed"),
        "notes.add.text: needs a description",
        "notes.add.n: integers need a minimum and a maximum",
      ]),
    );
  });

  it("checks example calls", () => {
    expect(callContractProblem(good, "notes.add", { text: "x" })).toBeUndefined();
    expect(callContractProblem(good, "notes.add", { txt: "x" }, "txt")).toBeUndefined();
    expect(callContractProblem(good, "notes.add", { text: "x" }, "text")).toMatch(/accepted/);
    expect(callContractProblem(good, "notes.add", {}, "zzz")).toMatch(/naming \[text\], not zzz/);
  });
});
