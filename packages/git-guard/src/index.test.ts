import { describe, expect, it } from "vitest";
import * as gitGuard from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/git-guard public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(gitGuard).sort()).toEqual([
      "GIT_GLOBAL_ARGS",
      "MAX_TREE_ENTRIES",
      "MissingRepositoryError",
      "UnsafeRepositoryError",
      "describeStripped",
      "exportCommits",
      "gitEnv",
      "gitFailure",
      "historyProblems",
      "importCommits",
      "invalidIndexPath",
      "newGitlinks",
      "sandboxedRunner",
      "snapshotTree",
      "stripNestedRepositories",
      "treeGit",
      "trustedRepoGit",
    ]);
  });
});
