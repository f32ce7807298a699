import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/process-group public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DEFAULT_KILL_GRACE_MS",
      "FATAL_SIGNALS",
      "SANDBOX_MARK_VAR",
      "exitOnSignals",
      "groupAlive",
      "groupMembers",
      "killMarkedProcesses",
      "signalGroup",
      "terminateGroup",
      "trackGroup",
      "untrackGroup",
    ]);
  });
});
