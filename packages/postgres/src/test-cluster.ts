import { afterAll, beforeAll, describe } from "vitest";
import { findPostgresBin, postgresRequired, startTestCluster, type TestCluster } from "./testing.js";

const available = findPostgresBin() !== undefined;
if (!available && postgresRequired()) {
  throw new Error(
    "CAPGATE_REQUIRE_SYSTEM_TESTS is set but PostgreSQL's server binaries are missing (install Debian's `postgresql`).",
  );
}

/** `describe` when PostgreSQL can run here; skipped (with the reason in its name) otherwise, and failing under CAPGATE_REQUIRE_SYSTEM_TESTS. */
export function describePg(name: string, body: () => void): void {
  (available ? describe : describe.skip)(name, body);
}

/** One throwaway cluster per test file. */
export function useCluster(): { cluster: () => TestCluster } {
  let cluster: TestCluster | undefined;
  beforeAll(async () => {
    if (available) cluster = await startTestCluster();
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  }, 60_000);
  return {
    cluster: () => {
      if (!cluster) throw new Error("no cluster");
      return cluster;
    },
  };
}
