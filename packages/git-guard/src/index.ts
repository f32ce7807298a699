// Run git on a tree the model wrote; nothing from the tree runs.

export type { Gitlink, GitRunner, HistoryProblem } from "./gitlinks.js";
export { historyProblems, newGitlinks } from "./gitlinks.js";
export { GIT_GLOBAL_ARGS, gitEnv } from "./hardening.js";
export { invalidIndexPath } from "./index-guard.js";
export type { StripOptions, StrippedEntry, StrippedKind } from "./nested.js";
export { describeStripped, MAX_TREE_ENTRIES, stripNestedRepositories } from "./nested.js";
export type { Imported, ImportOptions, Snapshot } from "./publish.js";
export { exportCommits, importCommits, snapshotTree } from "./publish.js";
export type { CheckedRepository } from "./repo-guard.js";
export { MissingRepositoryError, UnsafeRepositoryError } from "./repo-guard.js";
export type {
  SandboxedRunnerOptions,
  TrustedRepoCall,
  TrustedRepoGit,
  TrustedRepoGitOptions,
} from "./runners.js";
export { sandboxedRunner, trustedRepoGit } from "./runners.js";
export type { ProcessRun, TreeGit, TreeGitCall, TreeGitOptions } from "./tree-git.js";
export { gitFailure, treeGit } from "./tree-git.js";
