import { capability as browserPanel } from "@capgate/capability-browser-panel";
import { capability as code } from "@capgate/capability-code";
import { capability as cua } from "@capgate/capability-cua";
import { capability as fs } from "@capgate/capability-fs";
import { capability as git } from "@capgate/capability-git";
import { capability as mcp } from "@capgate/capability-mcp";
import { capability as memory } from "@capgate/capability-memory";
import { capability as script } from "@capgate/capability-script";
import { capability as shell } from "@capgate/capability-shell";
import { capability as web } from "@capgate/capability-web";
import { capability as workers } from "@capgate/capability-workers";
import type { Capability } from "@capgate/tools";

/** The eleven built-in capabilities (49 tools), in registry order. */
export function builtinCapabilities(): Capability[] {
  return [fs, shell, git, web, browserPanel, cua, mcp, workers, memory, code, script];
}
