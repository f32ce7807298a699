export type { Needs, PartStatus, SystemPart } from "./system-parts.js";
export { decide, needs, partStatus, shellForTests, systemTestsRequired } from "./system-parts.js";
