export { HOSTILE_REFUSED, HOSTILE_SERVER, hostileCalls, REPLY_CHARS, resultText } from "./hostile-mcp.js";
export type { AttributeValue, OtlpReceiver, ReceivedSpan } from "./otlp-receiver.js";
export { startOtlpReceiver } from "./otlp-receiver.js";
export type { MarkedProcess } from "./process-scan.js";
export { leaveBehind, processesWith, uniqueSleep } from "./process-scan.js";
export type { ReadmeExampleOptions } from "./readme-example.js";
export { runReadmeExample } from "./readme-example.js";
export type { Needs, PartStatus, SystemPart } from "./system-parts.js";
export { decide, needs, partStatus, shellForTests, systemTestsRequired } from "./system-parts.js";
