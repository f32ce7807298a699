// Node-only entry: spawning stdio servers, serving over stdio, the disk tool-list cache.
// Kept apart so the root entry stays runtime-neutral (no node:child_process).
export type { AdHocServerOptions, AdHocSession } from "./stdio/ad-hoc.js";
export { connectAdHoc } from "./stdio/ad-hoc.js";
export { fileToolListCache } from "./stdio/disk-cache.js";
export { serverEnv } from "./stdio/env.js";
export { fileAuthStore } from "./stdio/file-auth-store.js";
export type { McpLoginOptions, McpLoginResult } from "./stdio/login.js";
export { loginMcpServer, logoutMcpServer } from "./stdio/login.js";
export type { LoopbackRedirect, LoopbackRedirectOptions } from "./stdio/loopback-redirect.js";
export { startLoopbackRedirect } from "./stdio/loopback-redirect.js";
export type { NodeMcpPoolOptions } from "./stdio/node-pool.js";
export { createNodeMcpPool } from "./stdio/node-pool.js";
export type { StdioProcessOptions } from "./stdio/process-transport.js";
export { StdioProcessTransport } from "./stdio/process-transport.js";
export type { StdioServing } from "./stdio/serve.js";
export { serveGateOverStdio } from "./stdio/serve.js";
export type { StdioTransportOptions } from "./stdio/transport-factory.js";
export { createStdioTransport } from "./stdio/transport-factory.js";
