import { describe, expect, it } from "vitest";
import { modeChangeExample } from "../examples/mode-change.js";

// The README's example, run for real so it cannot rot.
describe("README example", () => {
  it("infers Coder, then a switch to Researcher drops shell.run", () => {
    expect(modeChangeExample()).toEqual({
      inferred: "Coder",
      asCoder: ["fs", "git", "shell"],
      shellAsCoder: true,
      asResearcher: ["browser_panel", "memory", "web"],
      shellAsResearcher: false,
      coderBudget: 64000,
    });
  });
});
