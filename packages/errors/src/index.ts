export type { CapgateErrorOptions } from "./capgate-error.js";
export { CapgateError } from "./capgate-error.js";
