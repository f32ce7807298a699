import { defineCapability } from "@capgate/tools";
import { manifest } from "./manifest.js";
import { runCode } from "./run.js";

/**
 * The code capability. No policy step: the program is arbitrary code by design (risk
 * `exec`, so `on-risk` approval asks first); what is enforced is where and how it runs —
 * cwd = the workspace, env = `ctx.env`, own process group, timeout and output cap.
 */
export const capability = defineCapability({
  manifest,
  handlers: { run: runCode },
});
