export { capability } from "./capability.js";
export { manifest } from "./manifest.js";
export { BROWSER_RESOURCE_KEY, DEFAULT_BROWSER_EXECUTABLE } from "./session.js";
export type { PageElement, PageSnapshot } from "./snapshot-types.js";
export type { PanelData } from "./tools.js";
