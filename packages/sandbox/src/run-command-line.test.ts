// runCommandLineSandboxed (`capgate sandbox-exec`) against real bubblewrap: the command line
// runs with the workspace writable and nothing else, its exit code passes through, the
// environment is the minimal one, the config's state directory is hidden, and a config that
// says "sandbox": "off" does not turn it off. CI sets CAPGATE_REQUIRE_SYSTEM_TESTS=1, so a
// missing bwrap or socat fails there instead of skipping.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { type RunCommandLineSandboxedOptions, runCommandLineSandboxed } from "./run-command-line.js";
import { closeEgressProxies } from "./sandbox-proxy.js";

const system = needs(["bwrap", "socat"]);

const roots: string[] = [];
afterAll(async () => {
  await closeEgressProxies();
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/**
 * A workspace under /tmp, and a home with a secret OUTSIDE /tmp (which the sandbox replaces
 * wholesale), so that what stays unwritable or hidden is the sandbox's doing.
 */
function box() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-sbx-exec-")));
  const outside = realpathSync(mkdtempSync(join(homedir(), ".capgate-sbx-exec-test-")));
  roots.push(root, outside);
  const workspace = join(root, "ws");
  const home = join(outside, "home");
  mkdirSync(workspace);
  mkdirSync(home);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    CAPGATE_HOME: join(outside, "state"),
    SECRET_TOKEN: "sk-secret",
  };
  return { root, outside, workspace, home, env };
}

async function run(options: RunCommandLineSandboxedOptions) {
  let stderr = "";
  const code = await runCommandLineSandboxed({
    ...options,
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stderr };
}

const read = (file: string) => readFileSync(file, "utf8");

describe("runCommandLineSandboxed: before anything runs", () => {
  it("a missing config file: 125 with the reason, and nothing run", async () => {
    const b = box();
    const r = await run({
      workspace: b.workspace,
      cwd: b.workspace,
      env: b.env,
      configPath: "missing.json",
      command: "touch ran.txt",
    });
    expect(r.code).toBe(125);
    expect(r.stderr).toBe(
      `capgate sandbox-exec: the command was not run: the config file ${join(b.workspace, "missing.json")} does not exist\n`,
    );
    expect(existsSync(join(b.workspace, "ran.txt"))).toBe(false);
  });

  it("a config that is not a JSON object: 125", async () => {
    const b = box();
    writeFileSync(join(b.workspace, "capgate.config.json"), "[]");
    const r = await run({
      workspace: b.workspace,
      cwd: b.workspace,
      env: b.env,
      configPath: join(b.workspace, "capgate.config.json"),
      command: "touch ran.txt",
    });
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("must hold a JSON object");
    expect(existsSync(join(b.workspace, "ran.txt"))).toBe(false);
  });
});

describe.skipIf(system.skip)(`runCommandLineSandboxed in bubblewrap${system.note}`, () => {
  it("writes in the workspace, not outside it, and passes the exit code through", async () => {
    const b = box();
    const outsideFile = join(b.outside, "outside.txt");
    const r = await run({
      workspace: b.workspace,
      cwd: b.workspace,
      env: b.env,
      command: `echo made > inside.txt; (echo x > ${outsideFile}) 2>/dev/null || echo refused > refused.txt; exit 7`,
    });
    expect(r.code, r.stderr).toBe(7);
    expect(read(join(b.workspace, "inside.txt"))).toBe("made\n");
    expect(read(join(b.workspace, "refused.txt"))).toBe("refused\n");
    expect(existsSync(outsideFile)).toBe(false);
  }, 120_000);

  it('stays sandboxed when the config says "sandbox": "off", and takes a config path relative to cwd', async () => {
    const b = box();
    writeFileSync(
      join(b.workspace, "capgate.config.json"),
      JSON.stringify({ shell: { sandbox: "off", network: "none" } }),
    );
    const outsideFile = join(b.outside, "outside.txt");
    const r = await run({
      workspace: b.workspace,
      cwd: b.workspace,
      env: b.env,
      configPath: "capgate.config.json",
      command: `(echo x > ${outsideFile}) 2>/dev/null || echo refused > refused.txt`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(read(join(b.workspace, "refused.txt"))).toBe("refused\n");
    expect(existsSync(outsideFile)).toBe(false);
  }, 120_000);

  it("gives the command shell.run's minimal environment plus env.set, and hides HOME's secrets and the state dir", async () => {
    const b = box();
    mkdirSync(join(b.home, ".ssh"));
    writeFileSync(join(b.home, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
    mkdirSync(join(b.workspace, "state"));
    writeFileSync(join(b.workspace, "state", "token.json"), "OAUTH-SECRET\n");
    writeFileSync(
      join(b.workspace, "capgate.config.json"),
      JSON.stringify({ stateDir: "state", shell: { network: "none" }, env: { set: { GREETING: "hi" } } }),
    );
    const r = await run({
      workspace: b.workspace,
      cwd: b.workspace,
      env: { ...b.env, DISPLAY: ":0" },
      configPath: join(b.workspace, "capgate.config.json"),
      command: [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
        'echo "token=${SECRET_TOKEN:-unset} greeting=${GREETING:-unset} display=${DISPLAY:-none}" > env.txt',
        `(cat ${join(b.home, ".ssh", "id_ed25519")} || echo hidden) > key.txt 2>/dev/null`,
        "(cat state/token.json || echo hidden) > state.txt 2>/dev/null",
      ].join("; "),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(read(join(b.workspace, "env.txt"))).toBe("token=unset greeting=hi display=none\n");
    expect(read(join(b.workspace, "key.txt"))).toBe("hidden\n");
    expect(read(join(b.workspace, "state.txt"))).toBe("hidden\n");
  }, 120_000);
});
