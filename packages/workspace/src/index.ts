// The workspace guard: what a tool may touch on disk. Paths confined to the workspace, the
// sandbox's hide list, capgate's policy file, git metadata, regular files only, and a host
// PATH with no entry the model can write.

export { lstatOrUndefined, realOrUndefined } from "./fs-probe.js";
export type { GitMetadataEntry } from "./git-metadata.js";
export { hasRepositoryLayout, isRepositoryLayout, PROTECTED_GIT_ENTRIES } from "./git-metadata.js";
export type { HiddenPath, HiddenScope } from "./hidden-paths.js";
export {
  HIDDEN_HOME_PATHS,
  hiddenPathAt,
  hiddenPathsOf,
  homeDirectories,
  pathLeads,
} from "./hidden-paths.js";
export { hostPath, withHostPath } from "./host-path.js";
export { openedFileRefusal } from "./opened-file.js";
export type { ResolveInWorkspaceOptions, WorkspaceScope } from "./path-guard.js";
export {
  isInside,
  realWorkspace,
  resolveInWorkspace,
  toWorkspaceRelative,
  workspaceHiddenPaths,
  workspacePathPolicy,
} from "./path-guard.js";
export type { PinnedDirectory, RemoveCheck } from "./pinned-dir.js";
export {
  makeDirectories,
  RemoveStoppedError,
  readDirectory,
  removeEntry,
  renameEntry,
  withPinnedDirectory,
} from "./pinned-dir.js";
export type { PolicyFileProtection } from "./policy-file.js";
export {
  isPolicyFile,
  POLICY_FILE_NAME,
  policyFilePaths,
  protectPolicyFile,
  releaseMissingPolicyFiles,
} from "./policy-file.js";
export type { PolicyScan } from "./policy-tree-scan.js";
export { MAX_POLICY_SCAN_ENTRIES, scanForPolicyFile } from "./policy-tree-scan.js";
export type { FileType, OpenRegularFileOptions } from "./regular-file.js";
export { describeFileType, fileTypeOf, NotRegularFileError, openRegularFile } from "./regular-file.js";
export { renameAside } from "./rename-aside.js";
