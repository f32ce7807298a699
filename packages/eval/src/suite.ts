import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseConfig } from "@capgate/harness";
import { CapgateError, parseJsonStrict, validate } from "@capgate/schema";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { placeholderProblems } from "./placeholders.js";
import { CHECK_SCHEMAS, suiteSchema, taskSchema } from "./task-schema.js";
import type { Suite, Task, TaskSpec } from "./types.js";

export interface SuiteProblem {
  /** The file at fault. */
  file: string;
  /** The property path inside it (`check[1].file`), empty for the file as a whole. */
  property: string;
  message: string;
}

/** A suite or task file that is not valid: every problem, each naming its file and property. */
export class InvalidSuiteError extends CapgateError {
  readonly problems: SuiteProblem[];
  constructor(problems: SuiteProblem[]) {
    const lines = problems.map((p) => `  - ${p.file}${p.property ? ` at ${p.property}` : ""}: ${p.message}`);
    super("invalid_suite", `The eval suite is invalid:\n${lines.join("\n")}`, {
      ...(problems[0]?.property ? { property: problems[0].property } : {}),
    });
    this.name = "InvalidSuiteError";
    this.problems = problems;
  }
}

const TASK_FILES = ["task.yaml", "task.yml", "task.json"];
const TASK_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** The starter suite shipped with this package. */
export function starterSuiteDir(): string {
  // dist/index.js and src/suite.ts both sit one level below the package root.
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "suites", "starter");
}

/**
 * Load a suite directory: `suite.json` (optional: name and description) and its tasks,
 * `tasks/<id>/task.yaml|yml|json` (a task with fixtures beside it) or `tasks/<id>.yaml|yml|json`.
 * Every file is checked in full before anything runs; all problems are reported at once.
 */
export function loadSuite(dir: string): Suite {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new CapgateError("invalid_suite", `The suite directory ${root} does not exist.`, {
      property: "suite",
    });
  }
  const problems: SuiteProblem[] = [];
  let name = basename(root);
  let description: string | undefined;
  const suiteFile = join(root, "suite.json");
  if (existsSync(suiteFile)) {
    const value = readDocument(suiteFile, problems);
    if (value !== undefined) {
      const checked = validate(suiteSchema, value);
      if (!checked.ok) for (const e of checked.errors) problems.push({ file: suiteFile, ...e });
      else {
        const suite = value as { name: string; description?: string };
        name = suite.name;
        description = suite.description;
      }
    }
  }
  const tasksDir = join(root, "tasks");
  if (!existsSync(tasksDir)) {
    throw new InvalidSuiteError([
      {
        file: root,
        property: "",
        message: "has no tasks/ directory (tasks/<id>/task.yaml or tasks/<id>.yaml)",
      },
    ]);
  }
  const tasks: Task[] = [];
  const seen = new Map<string, string>();
  for (const entry of readdirSync(tasksDir).sort()) {
    const path = join(tasksDir, entry);
    let file: string | undefined;
    let defaultId: string;
    if (statSync(path).isDirectory()) {
      file = TASK_FILES.map((f) => join(path, f)).find((f) => existsSync(f));
      defaultId = entry;
      if (!file) {
        problems.push({ file: path, property: "", message: `has no ${TASK_FILES.join(" or ")}` });
        continue;
      }
    } else if (TASK_EXTENSIONS.has(extname(entry))) {
      file = path;
      defaultId = entry.slice(0, -extname(entry).length);
    } else continue;
    const task = loadTask(file, defaultId, problems);
    if (!task) continue;
    const earlier = seen.get(task.id);
    if (earlier) {
      problems.push({ file, property: "id", message: `the id "${task.id}" is already used by ${earlier}` });
      continue;
    }
    seen.set(task.id, file);
    tasks.push(task);
  }
  if (problems.length > 0) throw new InvalidSuiteError(problems);
  if (tasks.length === 0) {
    throw new InvalidSuiteError([{ file: tasksDir, property: "", message: "holds no task files" }]);
  }
  return { name, ...(description ? { description } : {}), dir: root, tasks };
}

/** Check one task file; undefined (with the problems recorded) when it is not valid. */
export function loadTask(file: string, defaultId: string, problems: SuiteProblem[]): Task | undefined {
  const value = readDocument(file, problems);
  if (value === undefined) return undefined;
  const before = problems.length;
  const add = (property: string, message: string) => problems.push({ file, property, message });
  const checked = validate(taskSchema, value);
  if (!checked.ok) {
    for (const e of checked.errors) add(e.property, e.message);
    return undefined;
  }
  const spec = value as TaskSpec;
  const dir = dirname(file);
  const id = spec.id ?? defaultId;
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(id))
    add(
      "id",
      `the task id "${id}" must be lowercase letters, digits and "-" (from the file name unless set)`,
    );
  spec.check.forEach((check, i) => {
    checkOne(check, `check[${i}]`, add);
  });
  for (const [key, sub] of [
    ["workspace.dir", spec.workspace?.dir],
    ["web.dir", spec.web?.dir],
  ] as const) {
    if (sub === undefined) continue;
    const full = resolve(dir, sub);
    if (!full.startsWith(`${dir}/`) || !existsSync(full) || !statSync(full).isDirectory())
      add(key, `"${sub}" must be a directory inside the task's directory ${dir}`);
  }
  const fixturePaths: Array<[string, string[]]> = [
    ["workspace.files", Object.keys(spec.workspace?.files ?? {})],
    ["workspace.git.uncommitted", Object.keys(spec.workspace?.git?.uncommitted ?? {})],
    ...(spec.workspace?.git?.commits ?? []).flatMap(
      (c, i): Array<[string, string[]]> => [
        [`workspace.git.commits[${i}].files`, Object.keys(c.files ?? {})],
        [`workspace.git.commits[${i}].delete`, c.delete ?? []],
      ],
    ),
  ];
  for (const [key, paths] of fixturePaths) {
    for (const path of paths) {
      if (path === "" || path.startsWith("/") || path.split(/[\\/]/).includes(".."))
        add(key, `"${path}" must be a relative path inside the workspace (no "..")`);
    }
  }
  if (spec.mcpServers) {
    try {
      parseConfig({ mcpServers: spec.mcpServers }, { source: file });
    } catch (error) {
      const list = (error as { problems?: Array<{ property: string; message: string }> }).problems;
      if (!list) throw error;
      for (const p of list) add(p.property, p.message);
    }
  }
  for (const p of placeholderProblems({ ...spec, file })) add(p.property, p.message);
  if (problems.length > before) return undefined;
  return { ...spec, id, tags: spec.tags ?? [], dir, file };
}

function checkOne(check: Record<string, unknown> | object, at: string, add: (p: string, m: string) => void) {
  const keys = (Object.keys(CHECK_SCHEMAS) as Array<keyof typeof CHECK_SCHEMAS>).filter((k) =>
    Object.hasOwn(check, k),
  );
  if (keys.length !== 1) {
    add(
      at,
      keys.length === 0
        ? `a check needs exactly one of "command", "file" or "toolCall"; got ${Object.keys(check).join(", ") || "no keys"}`
        : `a check is one kind: it has ${keys.map((k) => `"${k}"`).join(" and ")}; split it into ${keys.length} checks`,
    );
    return;
  }
  const kind = keys[0]!;
  const result = validate(CHECK_SCHEMAS[kind], check);
  if (!result.ok) {
    for (const e of result.errors) add(e.property ? `${at}.${e.property}` : at, e.message);
    return;
  }
  const c = check as { matches?: string; file?: string };
  if (kind === "file" && c.matches !== undefined) {
    try {
      new RegExp(c.matches);
    } catch (error) {
      add(`${at}.matches`, `not a valid regular expression: ${(error as Error).message}`);
    }
  }
  if (kind === "file" && c.file && (c.file.startsWith("/") || c.file.split("/").includes("..")))
    add(`${at}.file`, `"${c.file}" must be a path inside the workspace (relative, no "..")`);
}

/** JSON (strict: duplicate keys are errors) or YAML (likewise), with line and column on failure. */
function readDocument(file: string, problems: SuiteProblem[]): unknown {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (error) {
    problems.push({ file, property: "", message: `cannot be read: ${(error as Error).message}` });
    return undefined;
  }
  if (extname(file) === ".json") {
    const parsed = parseJsonStrict(raw);
    if (parsed.ok) return parsed.value;
    problems.push({
      file,
      property: parsed.path,
      message: `not valid JSON at line ${parsed.line}, column ${parsed.column}: ${parsed.message}`,
    });
    return undefined;
  }
  try {
    return parseYaml(raw, { uniqueKeys: true });
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    const at = error.linePos?.[0];
    problems.push({
      file,
      property: "",
      message: `not valid YAML${at ? ` at line ${at.line}, column ${at.col}` : ""}: ${error.message.split("\n")[0]}`,
    });
    return undefined;
  }
}
