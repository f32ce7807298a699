export type { DeepReadonly, ManifestInput } from "./router.js";
export { Router } from "./router.js";
