import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SANDBOX_OFF_WARNING } from "@capgate/harness";
import { shellForTests } from "@capgate/test-system-parts";

export const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "bin.js");

export interface Sandbox {
  root: string;
  workspace: string;
  home: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A temp workspace and CAPGATE_HOME, with colour off. `runsCommands`: the test runs shell
 * commands (verify, shell.run) — on a machine without a working bubblewrap (and
 * CAPGATE_REQUIRE_SYSTEM_TESTS unset) they then run unsandboxed, by the config a user would
 * write for that (each run then prints the sandbox-off warning on stderr).
 */
export function sandbox(options: { runsCommands?: boolean } = {}): Sandbox {
  const root = mkdtempSync(join(tmpdir(), "capgate-cli-"));
  const workspace = join(root, "ws");
  const home = join(root, "home");
  mkdirSync(workspace);
  const env: NodeJS.ProcessEnv = { ...process.env, CAPGATE_HOME: home, NO_COLOR: "1", FORCE_COLOR: "0" };
  delete env.CAPGATE_MODEL;
  const shell = shellForTests();
  if (options.runsCommands && shell.sandbox === "off")
    writeFileSync(join(workspace, "capgate.config.json"), JSON.stringify({ shell }));
  return { root, workspace, home, env };
}

/** stderr without the one line every run prints while the sandbox is off (see `sandbox()`). */
export function withoutSandboxOffWarning(stderr: string): string {
  return stderr
    .split("\n")
    .filter((line) => line !== SANDBOX_OFF_WARNING)
    .join("\n");
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the built CLI to completion. */
export function cli(
  args: string[],
  box: Sandbox,
  options: { input?: string; cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? box.workspace,
      env: { ...box.env, ...options.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** Start the CLI and hand back the process (for signals and long-running commands). */
export function start(args: string[], box: Sandbox): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: box.workspace,
    env: box.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** A scripted model file of actions. */
export function script(box: Sandbox, actions: Array<[string, Record<string, unknown>] | string>): string {
  const file = join(box.root, `script-${Math.random().toString(36).slice(2)}.json`);
  const replies = actions.map((a) =>
    typeof a === "string" ? a : JSON.stringify({ name: a[0], arguments: a[1] }),
  );
  writeFileSync(file, JSON.stringify(replies));
  return file;
}

/** Process ids whose command line contains `needle` (from the process table). */
export function processesMatching(needle: string): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((l) => l.includes(needle) && !l.includes("ps -eo"))
    .map((l) => l.trim().split(/\s+/))
    .filter(([, stat]) => stat && !stat.startsWith("Z"))
    .map(([pid]) => Number(pid));
}

/**
 * A third-party capability by path, written against the built public `@capgate/tools`
 * (`./greet.mjs`: one tool, `greet.hello`), and a broken one (`./broken.mjs`: its manifest
 * fails the check) — the plugins the `--capability` and config `capabilities` tests load.
 */
export function writePlugins(dir: string): { greet: string; broken: string } {
  const tools = new URL("../../../../packages/tools/dist/index.js", import.meta.url).href;
  writeFileSync(
    join(dir, "greet.mjs"),
    `import { defineCapability } from ${JSON.stringify(tools)};
export const capability = defineCapability({
  manifest: { name: "greet", version: "2.0.0", manifestFormat: 1,
    description: "Greets people by name and says hello to them.", profileFit: ["Orchestrator"],
    tools: [{ name: "greet.hello", description: "Say hello to one person, by their name.", risk: "read",
      inputSchema: { type: "object", additionalProperties: false, required: ["who"],
        properties: { who: { type: "string", minLength: 1, maxLength: 50, description: "Who to greet." } } } }] },
  handlers: { hello: async (args) => ({ success: true, summary: "hello " + args.who }) },
});
`,
  );
  writeFileSync(
    join(dir, "broken.mjs"),
    "export const capability = { manifest: {} , handlers: new Map() };\n",
  );
  return { greet: "./greet.mjs", broken: "./broken.mjs" };
}
