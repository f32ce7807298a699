import { needs } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe } from "vitest";
import { startTestCluster, type TestCluster } from "./cluster.js";

// Throws under CAPGATE_REQUIRE_SYSTEM_TESTS when the binaries are missing.
const postgres = needs(["postgres"]);
const available = !postgres.skip;

/** `describe` when PostgreSQL can run here; skipped (with the reason in its name) otherwise, and failing under CAPGATE_REQUIRE_SYSTEM_TESTS. */
export function describePg(name: string, body: () => void): void {
  describe.skipIf(postgres.skip)(name + postgres.note, body);
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
