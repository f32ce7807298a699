import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidSuiteError, loadSuite, starterSuiteDir } from "./suite.js";

/** A suite directory with these files (path → content). */
function suite(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "capgate-eval-suite-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

function problems(dir: string) {
  try {
    loadSuite(dir);
  } catch (error) {
    if (error instanceof InvalidSuiteError) return error.problems;
    throw error;
  }
  throw new Error("expected the suite to be invalid");
}

const ok = "goal: do it\ncheck:\n  - file: out.txt\n";

describe("loadSuite", () => {
  it("loads the starter suite: at least 24 tasks, each tagged, with a goal and checks", () => {
    const s = loadSuite(starterSuiteDir());
    expect(s.name).toBe("starter");
    expect(s.tasks.length).toBeGreaterThanOrEqual(24);
    for (const t of s.tasks) {
      expect(t.tags.length).toBeGreaterThan(0);
      expect(t.check.length).toBeGreaterThan(0);
    }
    const tags = new Set(s.tasks.flatMap((t) => t.tags));
    for (const kind of ["files", "shell", "tests", "git", "web", "mcp", "multi-step"])
      expect(tags).toContain(kind);
  });

  it("reads YAML and JSON tasks, in a directory or as one file, with the id from the name", () => {
    const dir = suite({
      "suite.json": '{"name": "mine"}',
      "tasks/a/task.yaml": ok,
      "tasks/b.json": '{"goal": "do b", "tags": ["x"], "check": [{"command": "true"}]}',
      "tasks/c.yml": "id: see\ngoal: do c\ncheck:\n  - toolCall: fs.write\n    arguments: { path: a }\n",
    });
    const s = loadSuite(dir);
    expect(s.name).toBe("mine");
    expect(s.tasks.map((t) => t.id)).toEqual(["a", "b", "see"]);
    expect(s.tasks[1]?.tags).toEqual(["x"]);
  });

  it("names the file and the property of every problem, all at once, with a did-you-mean", () => {
    const dir = suite({
      "tasks/typo.yaml": "goal: g\nchek:\n  - file: a\n",
      "tasks/nogoal.yaml": "check:\n  - command: 'true'\n",
      "tasks/two-kinds.yaml": "goal: g\ncheck:\n  - command: 'true'\n    file: a\n",
      "tasks/no-kind.yaml": "goal: g\ncheck:\n  - equals: x\n",
      "tasks/bad-check.yaml": "goal: g\ncheck:\n  - file: a\n    equal: x\n",
      "tasks/regex.yaml": "goal: g\ncheck:\n  - file: a\n    matches: '(['\n",
      "tasks/escape.yaml": "goal: g\ncheck:\n  - file: ../outside\n",
      "tasks/budget.yaml": "goal: g\ncheck:\n  - file: a\nbudget: { steps: 0 }\n",
    });
    const list = problems(dir);
    const find = (file: string) => list.filter((p) => p.file.endsWith(file));
    expect(find("typo.yaml")[0]).toMatchObject({ property: "chek" });
    expect(find("typo.yaml")[0]?.message).toMatch(/did you mean `check`/);
    expect(
      find("nogoal.yaml")
        .map((p) => p.message)
        .join(" "),
    ).toMatch(/goal/);
    expect(find("two-kinds.yaml")[0]).toMatchObject({ property: "check[0]" });
    expect(find("two-kinds.yaml")[0]?.message).toMatch(/one kind/);
    expect(find("no-kind.yaml")[0]?.message).toMatch(/exactly one of "command", "file" or "toolCall"/);
    expect(find("bad-check.yaml")[0]).toMatchObject({ property: "check[0].equal" });
    expect(find("bad-check.yaml")[0]?.message).toMatch(/did you mean `equals`/);
    expect(find("regex.yaml")[0]).toMatchObject({ property: "check[0].matches" });
    expect(find("escape.yaml")[0]).toMatchObject({ property: "check[0].file" });
    expect(find("budget.yaml")[0]).toMatchObject({ property: "budget.steps" });
  });

  it("reports syntax errors with line and column, and duplicate keys", () => {
    const dir = suite({
      "tasks/yaml.yaml": "goal: [unclosed\ncheck: []\n",
      "tasks/dup.yaml": "goal: a\ngoal: b\ncheck:\n  - file: a\n",
      "tasks/json.json": '{"goal": "a", "goal": "b", "check": [{"file": "a"}]}',
    });
    const list = problems(dir);
    expect(list.find((p) => p.file.endsWith("yaml.yaml"))?.message).toMatch(
      /not valid YAML at line \d+, column \d+/,
    );
    expect(list.find((p) => p.file.endsWith("dup.yaml"))?.message).toMatch(/unique|duplicate/i);
    expect(list.find((p) => p.file.endsWith("json.json"))).toMatchObject({ property: "goal" });
  });

  it("checks placeholders, fixture directories, MCP server entries and duplicate ids", () => {
    const dir = suite({
      "tasks/web.yaml": "goal: 'open {{web}}/x'\ncheck:\n  - file: a\n",
      "tasks/unknown.yaml": "goal: 'in {{wrkspace}}'\ncheck:\n  - file: a\n",
      "tasks/bin.yaml":
        "goal: g\nmcpServers:\n  s:\n    command: node\n    args: ['{{bin:@capgate/not-a-package}}']\ncheck:\n  - file: a\n",
      "tasks/server.yaml": "goal: g\nmcpServers:\n  s:\n    args: ['x']\ncheck:\n  - file: a\n",
      "tasks/fixture.yaml": "goal: g\nworkspace: { dir: missing }\ncheck:\n  - file: a\n",
      "tasks/one.yaml": "id: same\ngoal: g\ncheck:\n  - file: a\n",
      "tasks/two.yaml": "id: same\ngoal: g\ncheck:\n  - file: a\n",
      "tasks/files.yaml": "goal: g\nworkspace:\n  files:\n    ../up.txt: x\ncheck:\n  - file: a\n",
    });
    const list = problems(dir);
    const of = (file: string) => list.find((p) => p.file.endsWith(file));
    expect(of("web.yaml")).toMatchObject({ property: "goal" });
    expect(of("web.yaml")?.message).toMatch(/needs a `web` directory/);
    expect(of("unknown.yaml")?.message).toMatch(/unknown placeholder \{\{wrkspace\}\}/);
    expect(of("bin.yaml")).toMatchObject({ property: "mcpServers.s.args[0]" });
    expect(of("bin.yaml")?.message).toMatch(/not installed/);
    expect(of("server.yaml")?.property).toMatch(/^mcpServers\.s/);
    expect(of("fixture.yaml")).toMatchObject({ property: "workspace.dir" });
    expect(of("two.yaml")?.message).toMatch(/already used by .*one\.yaml/);
    expect(of("files.yaml")).toMatchObject({ property: "workspace.files" });
  });

  it("refuses a directory without tasks", () => {
    expect(() => loadSuite(suite({ "suite.json": '{"name": "empty"}' }))).toThrow(/no tasks\/ directory/);
    expect(() => loadSuite(join(tmpdir(), "capgate-eval-no-such-suite"))).toThrow(/does not exist/);
  });
});
