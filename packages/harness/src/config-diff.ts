import { stableStringify } from "@capgate/schema";
import type { CapgateConfig, ResolvedConfig } from "./config.js";

/** What a config reload did: MCP servers by what happened to them, and what waits for a restart. */
export interface ConfigReloadResult {
  /** Servers new in the file: they start lazily, on first use, as at start. */
  added: string[];
  /** Servers gone from the file: their sessions were closed (stdio: their processes ended). */
  removed: string[];
  /** Servers whose entry differs in any field: closed, and started again from the new entry on first use. */
  changed: string[];
  /** Servers whose entry is the same: their sessions and tool lists were kept. */
  unchanged: string[];
  /**
   * Top-level fields that differ from the config in force but apply only at start
   * (`stateDir`, `database`, `profiles`…): ignored until a restart, never half-applied.
   * `mcpServers` is listed here when the harness started without any server (no pool to change).
   */
  needsRestart: string[];
}

/** The one field a running harness takes from an edited config. */
export const RELOADABLE_FIELDS = ["mcpServers"] as const;

/**
 * Compare the config in force with an edited one. A server counts as changed when its
 * entry as written differs in any field (deep, key order aside: compared as stable JSON text, not a hash), so fields added to
 * entries later count without a change here. `applied` says whether mcpServers can be
 * put in force (a harness that started without servers has no pool to change).
 */
export function diffConfigs(
  current: ResolvedConfig,
  next: ResolvedConfig,
  hasPool: boolean,
): ConfigReloadResult & { applied: boolean } {
  const before = current.config.mcpServers ?? {};
  const after = next.config.mcpServers ?? {};
  const added = Object.keys(after).filter((name) => !Object.hasOwn(before, name));
  const removed = Object.keys(before).filter((name) => !Object.hasOwn(after, name));
  const kept = Object.keys(after).filter((name) => Object.hasOwn(before, name));
  const changed = kept.filter((name) => stableStringify(before[name]) !== stableStringify(after[name]));
  const unchanged = kept.filter((name) => !changed.includes(name));
  const needsRestart = startOnlyDifferences(current.config, next.config);
  const serversDiffer = added.length + removed.length + changed.length > 0;
  if (serversDiffer && !hasPool)
    return {
      added: [],
      removed: [],
      changed: [],
      unchanged: [],
      needsRestart: ["mcpServers", ...needsRestart],
      applied: false,
    };
  return { added, removed, changed, unchanged, needsRestart, applied: true };
}

/** Top-level fields other than the reloadable ones whose values differ. */
function startOnlyDifferences(before: CapgateConfig, after: CapgateConfig): string[] {
  const fields = new Set([...Object.keys(before), ...Object.keys(after)]);
  const reloadable: readonly string[] = RELOADABLE_FIELDS;
  return [...fields]
    .filter((field) => !reloadable.includes(field))
    .filter(
      (field) =>
        stableStringify((before as Record<string, unknown>)[field] ?? null) !==
        stableStringify((after as Record<string, unknown>)[field] ?? null),
    )
    .sort();
}
