import { manifest as browserPanel } from "@capgate/capability-browser-panel/manifest";
import { manifest as code } from "@capgate/capability-code/manifest";
import { manifest as cua } from "@capgate/capability-cua/manifest";
import { manifest as fs } from "@capgate/capability-fs/manifest";
import { manifest as git } from "@capgate/capability-git/manifest";
import { manifest as mcp } from "@capgate/capability-mcp/manifest";
import { manifest as memory } from "@capgate/capability-memory/manifest";
import { manifest as script } from "@capgate/capability-script/manifest";
import { manifest as shell } from "@capgate/capability-shell/manifest";
import { manifest as web } from "@capgate/capability-web/manifest";
import { manifest as workers } from "@capgate/capability-workers/manifest";
import { addPrecompiledValidators } from "@capgate/schema";
import { type DeferredCapability, deferCapability } from "@capgate/tools";
import { builtinValidators } from "./generated/builtin-validators.js";

let builtins: readonly DeferredCapability[] | undefined;

/**
 * The eleven built-in capabilities (53 tools), in registry order. Each is registered from its
 * package's `./manifest` (plain data); its handlers, and the libraries they use, are imported
 * when one of its tools is first called. A process calls a few tools of one or two
 * capabilities, so it never loads the rest. Their input schemas have precompiled validators,
 * so checking a call's arguments loads no schema compiler either.
 */
export function builtinCapabilities(): DeferredCapability[] {
  if (builtins) return [...builtins];
  addPrecompiledValidators(builtinValidators);
  builtins = [
    deferCapability(fs, async () => (await import("@capgate/capability-fs")).capability),
    deferCapability(shell, async () => (await import("@capgate/capability-shell")).capability),
    deferCapability(git, async () => (await import("@capgate/capability-git")).capability),
    deferCapability(web, async () => (await import("@capgate/capability-web")).capability),
    deferCapability(browserPanel, async () => (await import("@capgate/capability-browser-panel")).capability),
    deferCapability(cua, async () => (await import("@capgate/capability-cua")).capability),
    deferCapability(mcp, async () => (await import("@capgate/capability-mcp")).capability),
    deferCapability(workers, async () => (await import("@capgate/capability-workers")).capability),
    deferCapability(memory, async () => (await import("@capgate/capability-memory")).capability),
    deferCapability(code, async () => (await import("@capgate/capability-code")).capability),
    deferCapability(script, async () => (await import("@capgate/capability-script")).capability),
  ];
  return [...builtins];
}
