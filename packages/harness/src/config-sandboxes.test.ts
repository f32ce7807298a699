// The config is the policy, and a sandboxed command can create one where none was: the
// sandbox renames it aside when the command ends. Loading a config (any frontend, any
// reload) must neither read one while that command still runs nor, after its capgate
// process was killed, before the step it could not do is done. Real sandboxes (bubblewrap),
// a real process killed with SIGKILL.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { bashArgv, sandboxCommand } from "@capgate/sandbox";
import { needs } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "./config.js";
import { createHarness, SANDBOX_OFF_WARNING } from "./harness.js";

const system = needs(["bwrap"]);
const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-config-sandboxes-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PLANTED = JSON.stringify({ shell: { sandbox: "off" } });

function place(name: string): { ws: string; state: string; env: Record<string, string> } {
  const ws = join(root, name);
  const state = join(root, `${name}-state`);
  mkdirSync(ws);
  mkdirSync(state);
  return { ws, state, env: { HOME: root, CAPGATE_HOME: state } };
}

describe.skipIf(system.skip)(`loading a config beside sandboxes${system.note}`, { timeout: 60_000 }, () => {
  it("does not obey a config a running sandbox may have created, and reads none after the sandbox renamed it aside", async () => {
    const { ws, state, env } = place("running");
    const wrapped = await sandboxCommand(bashArgv("true"), {
      workspace: ws,
      cwd: ws,
      env: {},
      stateDir: state,
    });
    // What the command does inside: the policy file was missing when it started.
    writeFileSync(join(ws, "capgate.config.json"), PLANTED);
    const found = loadConfig({ cwd: ws, env });
    expect(found.path).toBeUndefined();
    expect(found.config.shell?.sandbox).toBeUndefined();
    expect(found.recovered?.join(" ")).toMatch(
      /ignored .*capgate\.config\.json: .*still runs, so it may be its work/,
    );
    expect(() => loadConfig({ path: join(ws, "capgate.config.json"), env })).toThrow(
      expect.objectContaining({ code: "invalid_config", property: "config" }),
    );
    // The command ends: its after-command step renames the file aside, and the default config applies.
    expect(wrapped.release().join(" ")).toContain("renamed it to");
    const after = loadConfig({ cwd: ws, env });
    expect(after.path).toBeUndefined();
    expect(after.recovered).toBeUndefined();
  });

  it("a sandbox whose config names its own stateDir is seen by a process that has none", async () => {
    const { ws, state, env } = place("elsewhere");
    const own = join(root, "elsewhere-own-state");
    // The running process's config named `own`; the next one looks in $CAPGATE_HOME only.
    const before = process.env.CAPGATE_HOME;
    process.env.CAPGATE_HOME = state;
    const wrapped = await sandboxCommand(bashArgv("true"), {
      workspace: ws,
      cwd: ws,
      env: {},
      stateDir: own,
    });
    try {
      writeFileSync(join(ws, "capgate.config.json"), PLANTED);
      const found = loadConfig({ cwd: ws, env });
      expect(found.config.shell?.sandbox).toBeUndefined();
      expect(found.recovered?.join(" ")).toContain("ignored");
    } finally {
      wrapped.release();
      if (before === undefined) delete process.env.CAPGATE_HOME;
      else process.env.CAPGATE_HOME = before;
    }
  });

  it("an existing config is read while a sandbox runs (the sandbox binds it read-only)", async () => {
    const { ws, state, env } = place("existing");
    writeFileSync(join(ws, "capgate.config.json"), JSON.stringify({ approval: "always" }));
    const wrapped = await sandboxCommand(bashArgv("true"), {
      workspace: ws,
      cwd: ws,
      env: {},
      stateDir: state,
    });
    try {
      expect(loadConfig({ cwd: ws, env }).config.approval).toBe("always");
    } finally {
      wrapped.release();
    }
  });

  it("after its capgate process was killed, the next load renames the created config aside first", async () => {
    const { ws, state, env } = place("killed");
    // A capgate process that has a sandbox running when it is killed (SIGKILL: no exit hook runs).
    const sandboxEntry = join(
      dirname(createRequire(import.meta.url).resolve("@capgate/sandbox/package.json")),
      "dist/index.js",
    );
    const script = `
      const { bashArgv, sandboxCommand } = await import(${JSON.stringify(sandboxEntry)});
      await sandboxCommand(bashArgv("true"), { workspace: ${JSON.stringify(ws)}, cwd: ${JSON.stringify(ws)}, env: {}, stateDir: ${JSON.stringify(state)} });
      process.stdout.write("journaled\\n");
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((done, fail) => {
      child.stdout.on("data", (c: Buffer) => c.toString().includes("journaled") && done());
      child.once("exit", (code) => fail(new Error(`the sandbox host exited early (${code})`)));
    });
    writeFileSync(join(ws, "capgate.config.json"), PLANTED);
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGKILL");
    await exited;
    const loaded = loadConfig({ cwd: ws, env });
    expect(loaded.path).toBeUndefined();
    expect(loaded.config.shell?.sandbox).toBeUndefined();
    expect(loaded.recovered?.join(" ")).toContain("After an interrupted command");
    expect(existsSync(join(ws, "capgate.config.json"))).toBe(false);
    expect(readdirSync(ws).some((e) => e.startsWith("capgate.config.json.capgate-disabled-"))).toBe(true);
    expect(readdirSync(join(state, "sandboxes"))).toEqual([]);
  });

  it("a config naming its own stateDir: the sandboxes recorded there are settled too", async () => {
    const { ws, env } = place("own-state");
    const own = join(root, "own-state-dir");
    mkdirSync(own);
    const wrapped = await sandboxCommand(bashArgv("true"), {
      workspace: ws,
      cwd: ws,
      env: {},
      stateDir: own,
    });
    try {
      // The created file names that state dir: the default one ($CAPGATE_HOME) records nothing.
      writeFileSync(join(ws, "capgate.config.json"), JSON.stringify({ stateDir: own }));
      expect(() => loadConfig({ path: join(ws, "capgate.config.json"), env })).toThrow(/still running/);
      expect(loadConfig({ cwd: ws, env }).config.stateDir).toBeUndefined();
    } finally {
      wrapped.release();
    }
  });
});

describe("what a harness tells its operator at start (harness.notices)", () => {
  it("the sandbox turned off, and nothing when there is nothing to tell", async () => {
    const { ws, state } = place("notices");
    const off = await createHarness({
      config: parseConfig({ shell: { sandbox: "off" } }),
      workspace: ws,
      stateDir: state,
    });
    const quiet = await createHarness({ config: parseConfig({}), workspace: ws, stateDir: state });
    try {
      expect(off.notices).toEqual([SANDBOX_OFF_WARNING]);
      expect(quiet.notices).toEqual([]);
    } finally {
      await off.close();
      await quiet.close();
    }
  });
});

describe("loading a config beside a state directory the workspace would expose", () => {
  it("does not act on its journal before the harness refuses it", () => {
    const ws = join(root, "exposed");
    const victim = join(root, "exposed-victim");
    mkdirSync(join(ws, "sandboxes"), { recursive: true });
    mkdirSync(victim);
    // A record the model could have written: $CAPGATE_HOME is the workspace itself.
    const record = {
      pid: 2 ** 22 + 13,
      workspace: victim,
      missingPolicyFiles: [join(victim, "capgate.config.json")],
    };
    writeFileSync(join(ws, "sandboxes", "forged.json"), JSON.stringify(record));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15);
    writeFileSync(join(victim, "capgate.config.json"), "{}");
    loadConfig({ cwd: ws, env: { HOME: root, CAPGATE_HOME: ws } });
    expect(readdirSync(victim)).toEqual(["capgate.config.json"]);
    expect(existsSync(join(ws, "sandboxes", "forged.json"))).toBe(true);
  });
});
