import { mkdirSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { describe, expect, it } from "vitest";
import { runChecks } from "./checks.js";
import { materialiseWorkspace } from "./fixture.js";
import { loadSuite, starterSuiteDir } from "./suite.js";

const suite = loadSuite(starterSuiteDir());
const git = needs(["git"]);

describe.skipIf(git.skip)(`every starter task's checks fail on its unchanged fixture${git.note}`, () => {
  // A checker that passes before the model did anything measures nothing.
  it.each(suite.tasks.map((t) => [t.id, t] as const))("%s", async (_id, task) => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-eval-fresh-")));
    const workspace = join(root, "workspace");
    const scratch = join(root, "scratch");
    mkdirSync(scratch);
    await materialiseWorkspace(task, workspace);
    const outcomes = await runChecks(task, {
      workspace,
      values: { workspace, task: task.dir, scratch, node: process.execPath, web: "http://127.0.0.1:9" },
      events: [],
    });
    expect(outcomes).toHaveLength(task.check.length);
    expect(
      outcomes.some((c) => !c.passed),
      JSON.stringify(outcomes),
    ).toBe(true);
  });
});
