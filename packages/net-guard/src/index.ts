// The network guard: which URLs a tool may reach (scheme, host allow-list, no private or
// special-purpose address, checked after DNS) and a fetch that applies it to every hop.

export type { GuardedFetchOptions, GuardedResponse } from "./guarded-fetch.js";
export { guardedFetch } from "./guarded-fetch.js";
export type { CheckedUrl, CheckUrlOptions, HostResolver, ResolvedAddress } from "./url-guard.js";
export { checkUrl, parseAllowHost, urlPolicy } from "./url-guard.js";
