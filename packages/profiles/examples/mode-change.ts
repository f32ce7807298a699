import { applyProfile, inferProfileFromGoal, profiles, resolveProfiles } from "@capgate/profiles";
import { Router } from "@capgate/router";
import type { CapabilityManifest } from "@capgate/schema";

// Stand-ins for the built-in manifests; a Registry, or any { get(name) }, works as the source.
const manifest = (name: string, verbs: string[]): CapabilityManifest => ({
  name,
  version: "0.1.0",
  description: `${name} tools`,
  profileFit: [],
  tools: verbs.map((v) => ({
    name: `${name}.${v}`,
    description: `${name} ${v}`,
    inputSchema: { type: "object", additionalProperties: false, properties: {} },
  })),
});
const registry = new Map(
  [
    manifest("fs", ["read", "patch"]),
    manifest("shell", ["run"]),
    manifest("git", ["status"]),
    manifest("web", ["fetch"]),
    manifest("browser_panel", ["open"]),
    manifest("memory", ["remember"]),
  ].map((m) => [m.name, m]),
);

export function modeChangeExample() {
  const goal = "Fix the off-by-one bug in pagination";
  const inferred = inferProfileFromGoal(goal); // "Coder"

  const router = new Router();
  const asCoder = applyProfile(router, registry, profiles[inferred]); // ["fs", "git", "shell"]
  const shellAsCoder = router.isToolLoaded("shell.run"); // true

  // Switching profile clears first: shell.run is gone.
  const asResearcher = applyProfile(router, registry, profiles.Researcher); // ["browser_panel", "memory", "web"]
  const shellAsResearcher = router.isToolLoaded("shell.run"); // false

  // A config file's profiles section, merged onto the built-ins.
  const set = resolveProfiles({ Coder: { charBudget: 64000 } });

  return {
    inferred,
    asCoder,
    shellAsCoder,
    asResearcher,
    shellAsResearcher,
    coderBudget: set.Coder?.charBudget,
  };
}
