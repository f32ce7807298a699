export { capability } from "./capability.js";
export type { FetchData } from "./fetch-tool.js";
export { manifest } from "./manifest.js";
export type { RequestData } from "./request-tool.js";
