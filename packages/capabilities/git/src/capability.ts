import { defineCapability } from "@capgate/tools";
import { add, branch, checkout, commit } from "./change.js";
import { diff, log, show } from "./inspect.js";
import { manifest } from "./manifest.js";
import { pathPolicy } from "./paths.js";
import { refPolicy } from "./refs.js";
import { formatStatus, readStatus } from "./status.js";

/**
 * git.*: the git binary on the repository rooted at the workspace — no shell, hardened
 * options and environment, paths confined and passed after `--`, refs never options.
 */
export const capability = defineCapability({
  manifest,
  policies: {
    diff: pathPolicy("path"),
    log: pathPolicy("path"),
    add: pathPolicy("paths"),
    show: refPolicy("ref"),
    branch: refPolicy("name"),
    checkout: refPolicy("ref"),
  },
  handlers: {
    status: async (_args, ctx) => {
      const status = await readStatus(ctx);
      return { success: true, summary: formatStatus(status), data: status };
    },
    diff,
    log,
    show,
    add,
    commit,
    branch,
    checkout,
  },
});
