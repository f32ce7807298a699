import { type CapabilityManifest, CapgateError, closestMatch } from "@capgate/schema";
import type { ProfilePolicy } from "./policy.js";

/**
 * Where preloaded manifests come from. A `Registry` fits; so does anything with a `get`.
 * `list` is optional and only used to suggest a name when one is unknown.
 */
export interface ManifestSource {
  get(name: string): CapabilityManifest | undefined;
  list?(): readonly CapabilityManifest[];
}

/** The part of a `Router` that applying a profile needs. */
export interface LoadTarget {
  clearLoaded(): void;
  load(manifest: CapabilityManifest): void;
  loaded(): string[];
}

/**
 * Switch `router` to `profile`: clear everything loaded, then load the profile's preload
 * set. Clearing first is the whole security story of a mode change — a run that loaded
 * shell as Coder and switches to Researcher can no longer call shell.run.
 *
 * A preload name the registry does not know throws `unknown_capability`, and a load that
 * fails rethrows; in both cases the router is left empty, never half-loaded and never
 * still holding the previous profile's tools. Returns the loaded names, sorted.
 */
export function applyProfile(router: LoadTarget, registry: ManifestSource, profile: ProfilePolicy): string[] {
  router.clearLoaded();
  const manifests: CapabilityManifest[] = [];
  profile.preload.forEach((name, i) => {
    const manifest = registry.get(name);
    if (!manifest) {
      const known = registry.list?.().map((m) => m.name) ?? [];
      const guess = closestMatch(name, known);
      throw new CapgateError(
        "unknown_capability",
        `Profile '${profile.name}' preloads capability '${name}', which is not registered.${guess ? ` Did you mean '${guess}'?` : ""}`,
        { property: `profiles.${profile.name}.preload[${i}]` },
      );
    }
    manifests.push(manifest);
  });
  try {
    for (const m of manifests) router.load(m);
  } catch (error) {
    router.clearLoaded();
    throw error;
  }
  return router.loaded();
}
