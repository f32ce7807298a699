export type { LoadTarget, ManifestSource } from "./apply.js";
export { applyProfile } from "./apply.js";
export type { ProfileCheckOptions, ProfileOverride, ProfileProblem } from "./config.js";
export {
  getProfile,
  InvalidProfileError,
  profileNames,
  profilesConfigSchema,
  resolveProfiles,
  validateProfile,
} from "./config.js";
export type { ProfileInference } from "./infer.js";
export { explainProfileInference, inferProfileFromGoal } from "./infer.js";
export type { BuiltinProfileName, ProfilePolicy, ProfileSet } from "./policy.js";
export { BUILTIN_PROFILE_NAMES, profiles } from "./policy.js";
