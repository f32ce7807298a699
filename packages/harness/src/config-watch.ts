import { type FSWatcher, realpathSync, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { isInside } from "@capgate/workspace";
import { loadConfig } from "./config.js";
import type { ConfigReloadResult } from "./config-diff.js";
import type { Harness } from "./harness.js";

/** One reload: what it changed, or why the edit was refused (the last good config stays in force). */
export type ConfigReloadOutcome =
  | { ok: true; path: string; trigger: ConfigReloadTrigger; result: ConfigReloadResult }
  | { ok: false; path: string; trigger: ConfigReloadTrigger; error: Error };

/** What started a reload: the file changed on disk, or someone asked (SIGHUP, an API call). */
export type ConfigReloadTrigger = "file" | "request";

export interface ConfigWatcherOptions {
  /** The config file: it need not exist now (a deleted file's reload is refused until it is back). */
  path: string;
  /** Told about every reload, good or refused. */
  onReload: (outcome: ConfigReloadOutcome) => void;
  /** Quiet time after the last change on disk before reloading (default 150 ms): editors write in steps. */
  debounceMs?: number;
  /** Watch the file (default true); false: reload only when asked. */
  watch?: boolean;
  /**
   * The file is not watched — its directory is gone or has no inotify watch left, or it lies
   * in the workspace, where the model can write it: reloads then happen only when asked.
   */
  onWatchError?: (error: Error) => void;
}

export interface ConfigWatcher {
  /** Read the file and put it in force now (what SIGHUP does); resolves with the outcome, never rejects. */
  reload(): Promise<ConfigReloadOutcome>;
  /** Stop watching; a reload in progress completes. */
  close(): void;
}

/**
 * Keep a running harness on its config file: read it again when it changes (or when
 * asked) with the loader used at start, so an invalid edit is refused with the same
 * errors, and hand it to `harness.reloadConfig`. The directory is watched, not the file:
 * editors save by writing a new file and renaming it over the old one, and a file that is
 * deleted and created again must still be seen. Reloads run one at a time; changes that
 * arrive during one give one more.
 */
export function watchConfig(harness: Harness, options: ConfigWatcherOptions): ConfigWatcher {
  const path = resolve(options.path);
  const debounceMs = options.debounceMs ?? 150;
  let chain: Promise<unknown> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const reloadOnce = (trigger: ConfigReloadTrigger): Promise<ConfigReloadOutcome> => {
    const run = chain.then(async (): Promise<ConfigReloadOutcome> => {
      try {
        const result = await harness.reloadConfig(loadConfig({ path }));
        return { ok: true, path, trigger, result };
      } catch (error) {
        return { ok: false, path, trigger, error: error instanceof Error ? error : new Error(String(error)) };
      }
    });
    chain = run;
    return run.then((outcome) => {
      options.onReload(outcome);
      return outcome;
    });
  };

  let watcher: FSWatcher | undefined;
  const unwatchable = (error: unknown) => {
    watcher?.close();
    options.onWatchError?.(error instanceof Error ? error : new Error(String(error)));
  };
  // A config file in the workspace is one the model can write: through an MCP server's file
  // tools, or a command that creates it while it is missing (the sandbox renames such a file
  // aside only when the command ends). Watching it would put the model's own servers and
  // rules in force at once, so only an operator's request (SIGHUP) reloads it.
  const writableByModel = isInside(realOrResolved(harness.workspace), realOrResolved(dirname(path)));
  if (options.watch !== false && writableByModel) {
    unwatchable(
      new Error(
        "it is inside the workspace, where the model can write it, so edits take effect only on SIGHUP (or a restart), after you have read them",
      ),
    );
  } else if (options.watch !== false) {
    const name = basename(path);
    try {
      watcher = watch(dirname(path), { persistent: false }, (_event, filename) => {
        // Some platforms give no name: then any change in the directory may be ours.
        if (closed || (filename !== null && filename.toString() !== name)) return;
        clearTimeout(timer);
        timer = setTimeout(() => void reloadOnce("file"), debounceMs);
      });
      // The directory itself going away ends watching; asking (SIGHUP) still reloads.
      watcher.on("error", unwatchable);
    } catch (error) {
      unwatchable(error);
    }
  }

  return {
    reload: () => reloadOnce("request"),
    close() {
      closed = true;
      clearTimeout(timer);
      watcher?.close();
    },
  };
}

/** The real path of a file or directory, or the resolved path of one that does not exist (yet). */
function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** One line for a log or stderr: what a reload changed, or why it was refused. */
export function describeReload(outcome: ConfigReloadOutcome): string {
  if (!outcome.ok)
    return `config reload refused, the last good config stays in force: ${outcome.error.message}`;
  const { added, removed, changed, unchanged, needsRestart } = outcome.result;
  const parts = [
    added.length ? `added ${added.join(", ")}` : "",
    removed.length ? `removed ${removed.join(", ")}` : "",
    changed.length ? `restarted ${changed.join(", ")}` : "",
    unchanged.length ? `kept ${unchanged.join(", ")}` : "",
  ].filter((p) => p !== "");
  const servers =
    added.length + removed.length + changed.length > 0 ? parts.join("; ") : "no MCP server changed";
  const restart = needsRestart.length
    ? ` · needs a restart (ignored until then): ${needsRestart.join(", ")}`
    : "";
  return `config reloaded from ${outcome.path}: ${servers}${restart}`;
}
