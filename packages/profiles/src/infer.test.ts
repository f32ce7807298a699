import { CapgateError } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { explainProfileInference, inferProfileFromGoal, inflections } from "./infer.js";

const cases: Record<string, string[]> = {
  Verifier: [
    "Verify that the login fix works",
    "Run the verification suite before release",
    "Test the new parser",
    "Add tests for the cache and make them pass",
    "testing the upload endpoint",
    "Make sure it is tested on Node 20",
    "The tester found a regression; reproduce it",
    "Validate the config file against the schema",
    "validating user input in the signup form",
    "Check that the API returns 404 for missing ids",
    "check whether the migration is idempotent",
    "Double-check the release notes",
    "Make sure the build is green",
    "QA the checkout flow",
    "Write e2e coverage for the dashboard",
    "Fix the failing unit-tests in src/", // testing is checked before coding
    "Re-test after the patch",
    "Confirm that the backup restores",
    "Run pytest and report failures",
    "VERIFY THE CLAIM",
    "verified?",
    "Does it pass the acceptance criteria?",
  ],
  Coder: [
    "Fix the off-by-one bug in pagination",
    "Refactor the payment module",
    "Implement rate limiting in the gateway",
    "Debugging the memory leak in the worker",
    "Add a function that parses ISO dates",
    "Commit the changes and open a pull request",
    "The build is broken on main",
    "Rebuild the docker image after bumping the dependency",
    "Write a Python script that renames files",
    "Migrate the codebase to TypeScript",
    "Patch the SQL injection in the search endpoint",
    "Update the README with install steps",
    "Why does this stack trace appear on startup",
    "Lint and format the src folder",
    "Rebase the feature onto main with git",
    "Explain this regex",
    "Look up why Node.js fails to start", // "node js" is a coding phrase, checked before research
    "Fix the compiler warning",
  ],
  Researcher: [
    "Research the history of the Rust borrow checker",
    "Find out which vendors support SAML",
    "Look up the current PostgreSQL release schedule",
    "What is the latest version of PostgreSQL?",
    "Summarize recent news about fusion energy",
    "Investigate market sizes for e-bikes",
    "Compile sources on the 1918 flu and cite them", // "compile" alone is not a coding word
    "Get the latest contest results", // "latest" and "contest" are not "test"
    "Browse the web for reviews of the Framework laptop",
    "Collect information about the tallest buildings in Asia",
    "Read the arXiv paper on mixture-of-experts",
    "Search online for bank branches open on Sunday",
    "https://example.com — what does this site sell?",
    "Open example.com in the browser and read the pricing",
  ],
  ComputerOperator: [
    "Click the Save button in the desktop app",
    "Take a screenshot of the whole screen",
    "Open the settings dialog and enable dark mode",
    "Drag the file onto the trash icon",
    "Use the mouse and keyboard to fill in the form in the GUI",
    "Scroll down in the window until the footer shows",
    "Operate LibreOffice Calc to sort column B",
    "computer use: rename the folder from the file manager",
  ],
  Orchestrator: [
    "",
    "   ",
    "Plan the quarterly offsite",
    "Organize the team's work for next week",
    "Write a haiku about autumn",
  ],
};

describe("inferProfileFromGoal", () => {
  for (const [profile, goals] of Object.entries(cases)) {
    it.each(goals)(`routes %j to ${profile}`, (goal) => {
      expect(inferProfileFromGoal(goal)).toBe(profile);
    });
  }

  it.each([
    "latest",
    "the latest release",
    "contest",
    "attestation of the build artifacts",
    "protest",
    "fastest",
    "greatest",
    "testament",
    "detest",
    "intestine",
    "testimony",
    "Celeste",
    "checkout page",
    "invalidate",
    "attest",
  ])("does not read %j as a verification word", (goal) => {
    expect(inferProfileFromGoal(goal)).not.toBe("Verifier");
  });

  it.each([
    ["barcode scanner prices", "barcode"],
    ["encode a postcard", "encode"],
    ["The codex of Leicester", "codex"],
    ["Research ZIP codes in Ohio", "codes"],
    ["bank branches in Lyon", "branches"],
    ["the tallest buildings", "building"],
    ["prefix matching", "prefix"],
  ])("does not read %j as coding (%s)", (goal) => {
    expect(inferProfileFromGoal(goal)).not.toBe("Coder");
  });

  it("matches whole words only, whatever the case and punctuation", () => {
    expect(inferProfileFromGoal("TESTS!")).toBe("Verifier");
    expect(inferProfileFromGoal("(testing)")).toBe("Verifier");
    expect(inferProfileFromGoal("unit-tested")).toBe("Verifier");
    expect(inferProfileFromGoal("pretest")).toBe("Orchestrator");
    expect(inferProfileFromGoal("Ｔｅｓｔ the parser")).toBe("Verifier"); // full-width, NFKC-normalised
  });

  it("checks Verifier first, then Coder, then Researcher, then ComputerOperator", () => {
    expect(inferProfileFromGoal("Click the button, research the docs, fix the bug and test it")).toBe(
      "Verifier",
    );
    expect(inferProfileFromGoal("Click the button, research the docs and fix the bug")).toBe("Coder");
    expect(inferProfileFromGoal("Click the button and research the docs")).toBe("Researcher");
    expect(inferProfileFromGoal("Click the button")).toBe("ComputerOperator");
  });

  it("explains which word decided, by its base form", () => {
    expect(explainProfileInference("Testing the importer")).toEqual({ profile: "Verifier", matched: "test" });
    expect(explainProfileInference("we debugged it")).toEqual({ profile: "Coder", matched: "debug" });
    expect(explainProfileInference("checked that it works")).toEqual({
      profile: "Verifier",
      matched: "check that",
    });
    expect(explainProfileInference("opening pull requests")).toEqual({
      profile: "Coder",
      matched: "pull request",
    });
    expect(explainProfileInference("Plan a party")).toEqual({ profile: "Orchestrator" });
  });

  it("refuses a goal that is not a string, naming it", () => {
    let caught: unknown;
    try {
      inferProfileFromGoal(42 as unknown as string);
    } catch (error) {
      caught = error;
    }
    expect(CapgateError.isInstance(caught)).toBe(true);
    expect((caught as CapgateError).property).toBe("goal");
  });
});

describe("inflections", () => {
  it("generates regular forms, with e-dropping, y→ie and consonant doubling", () => {
    expect(inflections("test")).toEqual(expect.arrayContaining(["test", "tests", "tested", "testing"]));
    expect(inflections("validate")).toEqual(expect.arrayContaining(["validates", "validated", "validating"]));
    expect(inflections("verify")).toEqual(expect.arrayContaining(["verifies", "verified", "verifying"]));
    expect(inflections("debug")).toEqual(expect.arrayContaining(["debugged", "debugging"]));
    expect(inflections("commit")).toEqual(expect.arrayContaining(["committed", "committing"]));
    expect(inflections("test")).not.toContain("testted");
    expect(inflections("build")).not.toContain("building");
  });
});
