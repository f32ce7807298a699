export { capability } from "./capability.js";
export { manifest } from "./manifest.js";
