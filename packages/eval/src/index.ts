export type { CheckContext, CheckOutcome } from "./checks.js";
export { runChecks } from "./checks.js";
export type { DistractorServer, DistractorTool } from "./distractors.js";
export { distractorTools, startDistractorServer } from "./distractors.js";
export type { EvalOptions, EvalProgress, EvalResult } from "./eval.js";
export { runEval, selectTasks } from "./eval.js";
export type { RunMetrics } from "./metrics.js";
export { modelForRun } from "./model.js";
export type { PlaceholderValues } from "./placeholders.js";
export { htmlReport, markdownReport, writeReports } from "./report.js";
export type { ResultsFile, RunRecord } from "./results.js";
export { readResults, resultsSchema } from "./results.js";
export type { RunTaskOptions, RunTaskResult } from "./run-task.js";
export { runTask } from "./run-task.js";
export type { SuiteProblem } from "./suite.js";
export { InvalidSuiteError, loadSuite, starterSuiteDir } from "./suite.js";
export type { EvalSummary, ModeSummary, Rate, TaskSummary } from "./summary.js";
export { summarise, wilson } from "./summary.js";
export { suiteSchema, taskSchema } from "./task-schema.js";
export type { EvalTextStyle } from "./text.js";
export { describeEvalProgress, describeModeSummary, describeRunRecord } from "./text.js";
export type {
  EvalMode,
  GitCommit,
  Suite,
  Task,
  TaskBudget,
  TaskCheck,
  TaskSpec,
  TaskWorkspace,
} from "./types.js";
