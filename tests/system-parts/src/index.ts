export type { MarkedProcess } from "./process-scan.js";
export { leaveBehind, processesWith, uniqueSleep } from "./process-scan.js";
export type { Needs, PartStatus, SystemPart } from "./system-parts.js";
export { decide, needs, partStatus, shellForTests, systemTestsRequired } from "./system-parts.js";
