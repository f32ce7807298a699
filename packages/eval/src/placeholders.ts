import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { CapgateError } from "@capgate/schema";
import type { TaskSpec } from "./types.js";

/**
 * What a task may refer to with `{{name}}`, filled in for each run:
 * - `{{workspace}}` the run's workspace directory;
 * - `{{task}}` the task's directory (fixtures, hidden check scripts the model cannot edit);
 * - `{{scratch}}` a directory of the run outside the workspace (a server's data file);
 * - `{{web}}` the base URL of the task's web server (`http://127.0.0.1:PORT`);
 * - `{{node}}` the Node.js binary running capgate;
 * - `{{bin:PACKAGE}}` the installed entry of an npm package's bin (`{{bin:@modelcontextprotocol/server-memory}}`),
 *   looked up from the suite, then from this package — so bundled servers start without npx or a download.
 */
export interface PlaceholderValues {
  workspace: string;
  task: string;
  scratch: string;
  web?: string;
  node: string;
}

const PATTERN = /\{\{\s*([a-z]+)(?::([^}\s]+))?\s*\}\}/g;
const NAMES = new Set(["workspace", "task", "scratch", "web", "node", "bin"]);

/** Fill the placeholders of one string. */
export function fillPlaceholders(text: string, values: PlaceholderValues, from: string): string {
  return text.replace(PATTERN, (_, name: string, arg: string | undefined) => {
    switch (name) {
      case "bin":
        return binEntry(arg ?? "", from);
      case "web":
        if (values.web === undefined)
          throw new CapgateError("invalid_suite", "{{web}} is used but the task has no `web` directory.");
        return values.web;
      case "workspace":
      case "task":
      case "scratch":
      case "node":
        return values[name];
      default:
        throw new CapgateError("invalid_suite", `unknown placeholder {{${name}}}`);
    }
  });
}

/** Fill every string inside a JSON value. */
export function fillDeep<T>(value: T, values: PlaceholderValues, from: string): T {
  if (typeof value === "string") return fillPlaceholders(value, values, from) as T;
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, values, from)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = fillDeep(v, values, from);
    return out as T;
  }
  return value;
}

/** Unknown placeholders, `{{web}}` without a web directory, and bins that cannot be found — by property. */
export function placeholderProblems(
  spec: TaskSpec & { file?: string },
): Array<{ property: string; message: string }> {
  const problems: Array<{ property: string; message: string }> = [];
  const visit = (value: unknown, at: string) => {
    if (typeof value === "string") {
      for (const m of value.matchAll(PATTERN)) {
        const [whole, name, arg] = m as unknown as [string, string, string | undefined];
        if (!NAMES.has(name)) {
          problems.push({
            property: at,
            message: `unknown placeholder ${whole}; known: {{workspace}}, {{task}}, {{scratch}}, {{web}}, {{node}}, {{bin:PACKAGE}}`,
          });
        } else if (name === "web" && !spec.web) {
          problems.push({ property: at, message: `${whole} needs a \`web\` directory in the task` });
        } else if (name === "bin") {
          if (!arg) problems.push({ property: at, message: "{{bin:PACKAGE}} needs a package name" });
          else if (spec.file) {
            try {
              binEntry(arg, spec.file);
            } catch (error) {
              problems.push({ property: at, message: (error as Error).message });
            }
          }
        }
      }
    } else if (Array.isArray(value))
      value.forEach((v, i) => {
        visit(v, `${at}[${i}]`);
      });
    else if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value)) visit(v, at ? `${at}.${k}` : k);
  };
  visit(spec.goal, "goal");
  visit(spec.mcpServers, "mcpServers");
  spec.check.forEach((c, i) => {
    if ("command" in c) visit(c.command, `check[${i}].command`);
    if ("toolCall" in c) visit(c.arguments, `check[${i}].arguments`);
  });
  return problems;
}

/** The file a package's bin points at: resolved from `from` (the task file), then from this package. */
export function binEntry(pkg: string, from: string): string {
  for (const base of [from, import.meta.url]) {
    let manifest: string | undefined;
    try {
      manifest = createRequire(base).resolve(`${pkg}/package.json`);
    } catch {
      manifest = findManifest(pkg, base);
    }
    if (!manifest) continue;
    const json = JSON.parse(readFileSync(manifest, "utf8")) as { bin?: string | Record<string, string> };
    const bin = typeof json.bin === "string" ? json.bin : Object.values(json.bin ?? {})[0];
    if (!bin) throw new CapgateError("invalid_suite", `the package ${pkg} has no bin`);
    return join(dirname(manifest), bin);
  }
  throw new CapgateError(
    "invalid_suite",
    `the package ${pkg} is not installed where the suite or @capgate/eval can find it (npm install ${pkg})`,
  );
}

/** Packages whose exports map hides package.json: walk up the node_modules directories. */
function findManifest(pkg: string, base: string): string | undefined {
  let dir = dirname(base.startsWith("file:") ? new URL(base).pathname : base);
  while (true) {
    const candidate = join(dir, "node_modules", pkg, "package.json");
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
