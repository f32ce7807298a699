import { type CapabilityManifest, stableStringify } from "@capgate/schema";
import { type Capability, type ManifestLike, toMutableManifest } from "./define.js";

/**
 * A capability known by its manifest alone until a tool of it is called: the executor
 * imports its handlers and policies (`load`) once the call's arguments are valid, then goes
 * on to policy, approval and the handler as for any capability. A host registers many
 * capabilities and a process calls a few, so the handler modules (and the libraries they
 * use) of the others are never loaded.
 */
export interface DeferredCapability {
  readonly manifest: CapabilityManifest;
  /**
   * The capability with its handlers: imported on the first call, then the same promise;
   * a failed import is tried again on the next call.
   */
  load(): Promise<Capability>;
}

/** What a capability set holds and the executor dispatches to. */
export type CapabilityEntry = Capability | DeferredCapability;

/** Whether the entry's handlers are still to be imported. */
export function isDeferred(entry: CapabilityEntry): entry is DeferredCapability {
  return !("handlers" in entry);
}

/**
 * A capability registered from its manifest (plain data, e.g. a package's `./manifest`
 * subpath), its handlers imported by `load` on first use — for a capability package, a
 * loader that imports the package root and returns its `capability`.
 *
 * `load` must resolve to a capability defined for this very manifest (the same tools,
 * schemas and risks); a different one is refused at load, so a handler never runs for
 * arguments checked against another schema.
 */
export function deferCapability(manifest: ManifestLike, load: () => Promise<Capability>): DeferredCapability {
  const declared = toMutableManifest(manifest);
  let loading: Promise<Capability> | undefined;
  const loadChecked = async (): Promise<Capability> => {
    const capability = await load();
    if (
      !capability ||
      typeof capability !== "object" ||
      !(capability.handlers instanceof Map) ||
      !(capability.policies instanceof Map)
    ) {
      throw new TypeError(`capability '${declared.name}': its loader did not return a defined capability`);
    }
    if (stableStringify(capability.manifest) !== stableStringify(declared)) {
      throw new TypeError(
        `capability '${declared.name}': the loaded handlers were defined for a different manifest (another version of the package?)`,
      );
    }
    return capability;
  };
  return Object.freeze({
    manifest: declared,
    load(): Promise<Capability> {
      if (loading) return loading;
      const attempt = loadChecked();
      loading = attempt;
      attempt.catch(() => {
        if (loading === attempt) loading = undefined;
      });
      return attempt;
    },
  });
}
