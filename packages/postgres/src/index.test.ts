import { describe, expect, it } from "vitest";
import * as postgres from "./index.js";

describe("public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(postgres).sort()).toEqual([
      "Notifier",
      "PgApprovalRegistry",
      "PgMemoryStore",
      "PgRunStore",
      "PostgresError",
      "RunQueue",
      "openDatabase",
      "prepareRunWorkspace",
      "redactUrl",
      "startWorker",
      "sweepLostRuns",
    ]);
  });
});
