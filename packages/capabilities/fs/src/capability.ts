import { defineCapability, type PolicyCheck } from "@capgate/tools";
import { workspacePathPolicy } from "@capgate/workspace";
import { deletePath, makeDir, movePath, statPath } from "./entries.js";
import { globFiles } from "./glob.js";
import { listDir } from "./list.js";
import { manifest } from "./manifest.js";
import { patchFile } from "./patch.js";
import { isNotFound } from "./paths.js";
import { policyTreePolicy } from "./policy-tree.js";
import { readFile } from "./read.js";
import { checkPattern } from "./regex-sandbox.js";
import { checkGlobPattern } from "./scope.js";
import { searchFiles } from "./search.js";
import { writeFile } from "./write.js";

/**
 * The shared path policy, except that "cannot exist" (a parent is a file) is left to the
 * handler, which reports it as a tool failure like any other missing path: a policy only
 * refuses escapes.
 */
function confine(properties: string | readonly string[], forWrite = false): PolicyCheck {
  const names = typeof properties === "string" ? [properties] : properties;
  // One check per argument, so `to` is still checked when `from` cannot exist.
  const checks = names.map((name) => workspacePathPolicy(name, { forWrite }));
  return async (args, ctx) => {
    for (const check of checks) {
      try {
        await check(args, ctx);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    return undefined;
  };
}

const readPath = confine("path");
const writePath = confine("path", true);

/** Each check in turn; the first refusal wins. */
function all(...checks: PolicyCheck[]): PolicyCheck {
  return async (args, ctx) => {
    for (const check of checks) await check(args, ctx);
    return undefined;
  };
}

/**
 * The fs capability. Policies confine every path argument to the workspace before approval
 * is asked or anything is touched (an escape is a `policy_denied` rejection); each handler
 * resolves its paths through the same guard again and acts only on the checked real path.
 */
export const capability = defineCapability({
  manifest,
  handlers: {
    read: readFile,
    write: writeFile,
    patch: patchFile,
    list: listDir,
    search: searchFiles,
    glob: globFiles,
    stat: statPath,
    move: movePath,
    delete: deletePath,
    mkdir: makeDir,
  },
  policies: {
    read: readPath,
    write: writePath,
    patch: writePath,
    list: readPath,
    search: (args, ctx) => {
      checkPattern(args.pattern);
      checkGlobPattern(args.glob, "glob");
      return readPath(args, ctx);
    },
    glob: (args, ctx) => {
      checkGlobPattern(args.pattern, "pattern");
      return readPath(args, ctx);
    },
    stat: readPath,
    // A directory holding capgate.config.json is never moved or deleted (policy-tree.ts).
    move: all(
      confine(["from", "to"], true),
      policyTreePolicy("from", "fs.move"),
      policyTreePolicy("to", "fs.move"),
    ),
    delete: all(writePath, policyTreePolicy("path", "fs.delete")),
    mkdir: writePath,
  },
});
