declare const __CAPGATE_VERSION__: string;

/** The CLI's version, set from package.json at build time. */
export const VERSION: string = typeof __CAPGATE_VERSION__ === "string" ? __CAPGATE_VERSION__ : "0.0.0-dev";
