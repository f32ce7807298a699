import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/workspace public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "HIDDEN_HOME_PATHS",
      "MAX_POLICY_SCAN_ENTRIES",
      "NotRegularFileError",
      "POLICY_FILE_NAME",
      "PROTECTED_GIT_ENTRIES",
      "RemoveStoppedError",
      "describeFileType",
      "fileTypeOf",
      "hasRepositoryLayout",
      "hiddenPathAt",
      "hiddenPathsOf",
      "homeDirectories",
      "hostPath",
      "isInside",
      "isPolicyFile",
      "isRepositoryLayout",
      "lstatOrUndefined",
      "makeDirectories",
      "openRegularFile",
      "openedFileRefusal",
      "pathLeads",
      "policyFilePaths",
      "protectPolicyFile",
      "readDirectory",
      "realOrUndefined",
      "realWorkspace",
      "releaseMissingPolicyFiles",
      "removeEntry",
      "renameAside",
      "renameEntry",
      "resolveInWorkspace",
      "scanForPolicyFile",
      "toWorkspaceRelative",
      "withHostPath",
      "withPinnedDirectory",
      "workspaceHiddenPaths",
      "workspacePathPolicy",
    ]);
  });
});
