export type { TestCluster } from "./cluster.js";
export { findPostgresBin, startTestCluster } from "./cluster.js";
