export { manifest } from "./manifest.js";
