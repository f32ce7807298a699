import type { ProfilePolicy } from "@capgate/profiles";
import { CapgateError, closestMatch } from "@capgate/schema";

/**
 * A profile by name (or a policy passed as is), with a did-you-mean error for unknown names.
 * Only the set's own entries count: `__proto__`, `constructor` or `toString` are unknown
 * names, never Object.prototype or one of its methods.
 */
export function resolveProfile(
  profiles: Record<string, ProfilePolicy>,
  profile: string | ProfilePolicy,
): ProfilePolicy {
  if (typeof profile !== "string") return profile;
  const found = Object.hasOwn(profiles, profile) ? profiles[profile] : undefined;
  if (found) return found;
  const names = Object.keys(profiles);
  const guess = closestMatch(profile, names);
  throw new CapgateError(
    "unknown_profile",
    `Unknown profile '${profile}'.${guess ? ` Did you mean '${guess}'?` : ""} Profiles: ${names.join(", ")}.`,
    { property: "profile" },
  );
}
