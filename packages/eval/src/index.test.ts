import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// Adding or removing a runtime export is an API decision: this list makes it visible in review.
describe("@capgate/eval public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "InvalidSuiteError",
      "describeEvalProgress",
      "describeModeSummary",
      "describeRunRecord",
      "distractorTools",
      "htmlReport",
      "loadSuite",
      "markdownReport",
      "modelForRun",
      "readResults",
      "resultsSchema",
      "runChecks",
      "runEval",
      "runTask",
      "selectTasks",
      "startDistractorServer",
      "starterSuiteDir",
      "suiteSchema",
      "summarise",
      "taskSchema",
      "wilson",
      "writeReports",
    ]);
  });
});
