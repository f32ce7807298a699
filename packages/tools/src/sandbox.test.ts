// The OS sandbox's guarantees, each against real bubblewrap and real processes: filesystem,
// environment, one shell, network (none / guarded / full against a real HTTP server on
// 127.0.0.1), refusal when bubblewrap is missing. CI sets CAPGATE_REQUIRE_SYSTEM_TESTS=1,
// so a missing bwrap or socat fails there instead of skipping.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackgroundProcesses } from "./background-processes.js";
import { runShell } from "./run-shell.js";
import { closeEgressProxies } from "./sandbox-proxy.js";
import { runSandboxed } from "./sandbox-run.js";
import type { ShellCheck } from "./shell-check.js";
import type { ShellPolicyConfig, WebPolicyConfig } from "./types.js";

// The sandbox is under test here, not the shell policy (its tests live in @capgate/shell-policy,
// which tools does not depend on): every command line is let through to the sandbox.
const check: ShellCheck = async () => ({ decision: "allow" });

// Skipped (the reason in the name) without a working bubblewrap, socat or curl; failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const system = needs(["bwrap", "socat", "curl"]);
const describeSandbox = (name: string, body: () => void) =>
  describe.skipIf(system.skip)(name + system.note, body);

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-sbx-")));
const ws = join(root, "ws");
// The fake home and state dir live OUTSIDE /tmp (which the sandbox replaces wholesale), so
// hiding them is the hide list's doing, not the private /tmp's.
const outside = realpathSync(mkdtempSync(join(homedir(), ".capgate-sbx-test-")));
const home = join(outside, "home");
const stateDir = join(outside, "state");
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" };

interface Run {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

function sh(
  command: string,
  shell: ShellPolicyConfig = {},
  web?: WebPolicyConfig,
  over: { cwd?: string; workspace?: string; env?: Record<string, string | undefined> } = {},
): Promise<Run> {
  return runShell({
    command,
    check,
    cwd: over.cwd ?? ws,
    env: over.env ?? env,
    policy: shell,
    sandbox: { workspace: over.workspace ?? over.cwd ?? ws, stateDir, ...(web ? { web } : {}) },
    timeoutMs: 20_000,
  });
}

let server: Server;
let port = 0;
let hits = 0;

beforeAll(async () => {
  mkdirSync(ws);
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "SECRET-SSH-KEY\n");
  writeFileSync(join(home, ".netrc"), "machine example.com password SECRET-NETRC\n");
  mkdirSync(join(home, ".aws"));
  writeFileSync(join(home, ".aws", "credentials"), "aws_secret_access_key = SECRET-AWS\n");
  writeFileSync(join(home, "notes.txt"), "readable but not writable\n");
  mkdirSync(join(stateDir, "traces"), { recursive: true });
  writeFileSync(join(stateDir, "traces", "run.jsonl"), "SECRET-TRACE\n");
  execFileSync("git", ["init", "-q", ws]);
  writeFileSync(join(ws, "README.md"), "open the door\n");
  server = createServer((_req, res) => {
    hits++;
    res.end("hello from the host\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await closeEgressProxies();
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describeSandbox("the sandbox's filesystem", () => {
  it("the workspace is read-write", async () => {
    const r = await sh("echo written > out.txt && mkdir -p sub && echo deep > sub/f && cat out.txt sub/f");
    expect(r).toMatchObject({ exitCode: 0, stdout: "written\ndeep\n" });
    expect(readFileSync(join(ws, "out.txt"), "utf8")).toBe("written\n");
  });

  it("secrets under HOME and the state dir are unreadable; the rest of HOME reads", async () => {
    const r = await sh(
      `cat ~/.ssh/id_ed25519; cat ~/.netrc; cat ~/.aws/credentials; cat ${stateDir}/traces/run.jsonl; ls -A ${stateDir}; cat ~/notes.txt`,
    );
    const all = r.stdout + r.stderr;
    for (const secret of ["SECRET-SSH-KEY", "SECRET-NETRC", "SECRET-AWS", "SECRET-TRACE"]) {
      expect(all).not.toContain(secret);
    }
    expect(r.stderr).toMatch(/id_ed25519: No such file or directory/);
    expect(r.stderr).toMatch(/run\.jsonl: No such file or directory/);
    expect(r.stdout).toContain("readable but not writable");
  });

  it("a program's directory shown from /tmp brings back neither secrets nor sockets in it", async () => {
    // The ad-hoc MCP case: the command line names a file under /tmp/<dir>, which is then shown
    // read-only so the program runs with its siblings — a home or state dir in it stays hidden.
    const top = realpathSync(mkdtempSync(join(tmpdir(), "capgate-sbx-shown-")));
    const topHome = join(top, "home");
    const topWs = join(topHome, "proj");
    const topState = join(top, "state");
    mkdirSync(join(topHome, ".ssh"), { recursive: true });
    mkdirSync(topWs);
    mkdirSync(topState);
    writeFileSync(join(topHome, ".ssh", "id_rsa"), "SECRET-SHOWN-SSH\n");
    writeFileSync(join(topState, "token.json"), "SECRET-SHOWN-STATE\n");
    writeFileSync(join(top, "prog.sh"), "echo prog-ran\n");
    const withSocket = realpathSync(mkdtempSync(join(tmpdir(), "capgate-sbx-sock-")));
    writeFileSync(join(withSocket, "prog.sh"), "echo prog-ran\n");
    const bus = createNetServer().listen(join(withSocket, "bus"));
    await new Promise((done) => bus.once("listening", done));
    try {
      const run = (args: string[], dir = top) =>
        runSandboxed({
          file: "/bin/sh",
          args,
          cwd: topWs,
          env: { ...env, HOME: topHome },
          shellPolicy: { network: "none" },
          sandbox: { workspace: topWs, stateDir: topState },
          timeoutMs: 20_000,
        }).then((r) => ({ ...r, dir }));
      // The program itself runs (its directory is shown) …
      expect((await run([join(top, "prog.sh")])).stdout).toBe("prog-ran\n");
      // … but naming a secret as the "script", or reading it from the program, shows nothing.
      const direct = await run([join(topHome, ".ssh", "id_rsa")]);
      expect(direct.stdout + direct.stderr).not.toContain("SECRET-SHOWN");
      const read = await run([
        join(top, "prog.sh"),
        "-c",
        `cat ${join(topHome, ".ssh", "id_rsa")} ${join(topState, "token.json")}`,
      ]);
      expect(read.stdout + read.stderr).not.toContain("SECRET-SHOWN");
      // A directory holding a socket is not shown at all.
      const sock = await run([join(withSocket, "prog.sh")], withSocket);
      expect(sock.stdout).not.toContain("prog-ran");
    } finally {
      bus.close();
      rmSync(top, { recursive: true, force: true });
      rmSync(withSocket, { recursive: true, force: true });
    }
  });

  it("secrets inside a workspace under /tmp stay hidden (the workspace bind does not bring them back)", async () => {
    const insideHome = join(ws, "inside-home");
    const insideState = join(ws, "inside-state");
    mkdirSync(join(insideHome, ".ssh"), { recursive: true });
    mkdirSync(insideState, { recursive: true });
    writeFileSync(join(insideHome, ".ssh", "id_rsa"), "SECRET-INSIDE-SSH\n");
    writeFileSync(join(insideHome, ".netrc"), "SECRET-INSIDE-NETRC\n");
    writeFileSync(join(insideState, "token.json"), "SECRET-INSIDE-STATE\n");
    try {
      const r = await runShell({
        command: "cat inside-home/.ssh/id_rsa inside-home/.netrc inside-state/token.json",
        check,
        cwd: ws,
        env: { ...env, HOME: insideHome },
        policy: {},
        sandbox: { workspace: ws, stateDir: insideState },
        timeoutMs: 20_000,
      });
      const all = r.stdout + r.stderr;
      for (const secret of ["SECRET-INSIDE-SSH", "SECRET-INSIDE-NETRC", "SECRET-INSIDE-STATE"])
        expect(all).not.toContain(secret);
    } finally {
      rmSync(insideHome, { recursive: true, force: true });
      rmSync(insideState, { recursive: true, force: true });
    }
  });

  it("a secret nested inside the workspace cannot be carried off by renaming its parent", async () => {
    const insideHome = join(ws, "nested-home");
    mkdirSync(join(insideHome, ".config", "gcloud"), { recursive: true });
    mkdirSync(join(insideHome, ".cargo"), { recursive: true });
    writeFileSync(join(insideHome, ".config", "gcloud", "token"), "SECRET-NESTED-GCLOUD\n");
    writeFileSync(join(insideHome, ".cargo", "credentials.toml"), "SECRET-NESTED-CARGO\n");
    const run = (command: string) =>
      runShell({
        command,
        check,
        cwd: ws,
        env: { ...env, HOME: insideHome },
        policy: { network: "none" },
        sandbox: { workspace: ws, stateDir },
        timeoutMs: 20_000,
      });
    try {
      const first = await run(
        "mv nested-home/.config nested-home/moved-config; mv nested-home/.cargo nested-home/moved-cargo",
      );
      expect(first.stderr).toMatch(/cannot move '?nested-home\/\.config'?.*(busy|not permitted)/i);
      expect(first.stderr).toMatch(/cannot move '?nested-home\/\.cargo'?.*(busy|not permitted)/i);
      expect(existsSync(join(insideHome, "moved-config"))).toBe(false);
      const second = await run(
        "cat nested-home/moved-config/gcloud/token nested-home/moved-cargo/credentials.toml nested-home/.config/gcloud/token nested-home/.cargo/credentials.toml",
      );
      expect(second.stdout + second.stderr).not.toMatch(/SECRET-NESTED/);
      // The rest of the holder stays writable.
      const third = await run("echo ok > nested-home/.config/other && cat nested-home/.config/other");
      expect(third.stdout).toBe("ok\n");
    } finally {
      rmSync(insideHome, { recursive: true, force: true });
    }
  }, 60_000);

  it("a state dir under .git stays hidden, and .git's own protections still hold", async () => {
    const inGit = join(ws, ".git", "capgate-state");
    mkdirSync(join(inGit, "runs"), { recursive: true });
    writeFileSync(join(inGit, "runs", "r.jsonl"), "SECRET-IN-GIT\n");
    try {
      const r = await runShell({
        check,
        command:
          "cat .git/capgate-state/runs/r.jsonl; echo x > .git/hooks/post-commit; echo '[core]' >> .git/config",
        cwd: ws,
        env,
        policy: { network: "none" },
        sandbox: { workspace: ws, stateDir: inGit },
        timeoutMs: 20_000,
      });
      expect(r.stdout + r.stderr).not.toContain("SECRET-IN-GIT");
      expect(r.stderr).toMatch(/post-commit: Read-only file system/);
      expect(r.stderr).toMatch(/config: Read-only file system/);
    } finally {
      rmSync(inGit, { recursive: true, force: true });
    }
  }, 60_000);

  it("everything outside the workspace is read-only, /tmp is private", async () => {
    const hostTmp = join(tmpdir(), `capgate-host-only-${process.pid}`);
    writeFileSync(hostTmp, "host tmp\n");
    try {
      const r = await sh(
        `echo x > ~/new-file; echo x > ${root}/beside-ws; touch /usr/capgate-sbx; echo y >> ~/notes.txt; cat ${hostTmp}; echo private > /tmp/inside && cat /tmp/inside`,
      );
      expect(r.stderr).toMatch(/new-file: Read-only file system/);
      expect(r.stderr).toMatch(/capgate-sbx.*Read-only file system/);
      expect(r.stderr).toContain("No such file or directory");
      expect(r.stdout).toBe("private\n");
      expect(existsSync(join(home, "new-file"))).toBe(false);
      expect(existsSync(join(root, "beside-ws"))).toBe(false);
      expect(existsSync("/usr/capgate-sbx")).toBe(false);
      expect(existsSync("/tmp/inside")).toBe(false);
      expect(readFileSync(join(home, "notes.txt"), "utf8")).toBe("readable but not writable\n");
    } finally {
      rmSync(hostTmp, { force: true });
    }
  });

  it(".git/hooks and .git/config refuse writes; the rest of the repository works", async () => {
    const config = readFileSync(join(ws, ".git", "config"), "utf8");
    const r = await sh(
      "echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo '[core] fsmonitor = evil' >> .git/config; git config core.hooksPath /tmp; git add README.md && git status --short",
    );
    expect(r.stderr).toMatch(/pre-commit: Read-only file system/);
    expect(r.stderr).toMatch(/config: Read-only file system/);
    expect(r.stdout).toContain("A  README.md");
    expect(existsSync(join(ws, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readFileSync(join(ws, ".git", "config"), "utf8")).toBe(config);
  });

  it(".git cannot be moved aside to plant fresh hooks and config", async () => {
    const r = await sh(
      "mv .git .git-aside; mkdir -p .git-new/hooks; echo 'touch /tmp/pwned' > .git-new/hooks/pre-commit; mv .git-new .git; ls -d .git-aside",
    );
    expect(r.stderr).toMatch(/mv: cannot move '\.git'.*(busy|Read-only|not permitted)/i);
    expect(existsSync(join(ws, ".git-aside"))).toBe(false);
    expect(existsSync(join(ws, ".git", "hooks", "pre-commit"))).toBe(false);
    rmSync(join(ws, ".git-new"), { recursive: true, force: true });
  });

  it("a missing .git/hooks cannot be created by the command either", async () => {
    rmSync(join(ws, ".git", "hooks"), { recursive: true, force: true });
    const r = await sh("mkdir -p .git/hooks; echo evil > .git/hooks/post-checkout; ls -A .git/hooks");
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(existsSync(join(ws, ".git", "hooks", "post-checkout"))).toBe(false);
  });

  it("a workspace without .git: the model cannot create a repository (hooks, config) of its own", async () => {
    const bare = join(root, "no-git");
    mkdirSync(bare);
    const r = await sh("git init -q . ; mkdir -p .git/hooks; echo x > .git/config; ls -A", {}, undefined, {
      cwd: bare,
    });
    expect(r.stderr).toMatch(/Read-only file system|Permission denied|cannot/i);
    // The read-only placeholder is gone again afterwards.
    expect(existsSync(join(bare, ".git"))).toBe(false);
  });
});

describeSandbox("the sandbox's environment and shell", () => {
  it("desktop, bus and agent variables are unset inside; others pass", async () => {
    const r = await sh(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's ${!v-unset}, not a template
      'for v in DISPLAY WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS BROWSER XAUTHORITY XDG_RUNTIME_DIR SSH_AUTH_SOCK; do echo "$v=${!v-unset}"; done; echo "KEEP=$KEEP"',
      {},
      undefined,
      {
        env: {
          ...env,
          DISPLAY: ":0",
          WAYLAND_DISPLAY: "wayland-0",
          DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/0/bus",
          BROWSER: "firefox",
          XAUTHORITY: "/root/.Xauthority",
          XDG_RUNTIME_DIR: "/run/user/0",
          SSH_AUTH_SOCK: "/tmp/agent.sock",
          KEEP: "kept",
        },
      },
    );
    expect(r.stdout).toBe(
      "DISPLAY=unset\nWAYLAND_DISPLAY=unset\nDBUS_SESSION_BUS_ADDRESS=unset\nBROWSER=unset\nXAUTHORITY=unset\nXDG_RUNTIME_DIR=unset\nSSH_AUTH_SOCK=unset\nKEEP=kept\n",
    );
  });

  it("runs bash --noprofile --norc with BASH_ENV and ENV ignored", async () => {
    writeFileSync(join(ws, "startup.sh"), "echo SOURCED\n");
    const r = await sh('((n = 2 + 3)); [[ $n == 5 ]] && echo "bash:$n" {a,b}; echo "$0"', {}, undefined, {
      env: { ...env, BASH_ENV: join(ws, "startup.sh"), ENV: join(ws, "startup.sh") },
    });
    expect(r.stdout).toMatch(/^bash:5 a b\n.*bash\n$/);
    expect(r.stdout).not.toContain("SOURCED");
  });

  it("the command is pid 2 of its own pid namespace and sees no host process", async () => {
    const r = await sh("echo $$; ls /proc | grep -c '^[0-9]'");
    const [pid, count] = r.stdout.trim().split("\n").map(Number);
    expect(pid).toBeLessThan(10);
    expect(count).toBeLessThan(10);
  });
});

describeSandbox("the sandbox's network", () => {
  const curl = (url: string, extra = "") =>
    `curl -sS -m 10 ${extra} -w '\\nhttp=%{http_code}\\n' ${url}; echo "curl=$?"`;

  it("guarded: the host's 127.0.0.1 servers, link-local and private addresses are refused like web.fetch", async () => {
    const before = hits;
    const r = await sh(
      [
        curl(`http://127.0.0.1:${port}/`, "--noproxy ''"),
        curl("http://169.254.169.254/latest/meta-data/"),
        curl("http://10.1.2.3/"),
        curl(`http://2130706433:${port}/`, "--noproxy ''"),
        curl(`https://127.0.0.1:${port}/`, "--noproxy ''"),
        curl(`http://127.0.0.1:${port}/`, `--socks5-hostname 127.0.0.1:3128 --noproxy ''`),
        curl(`http://127.0.0.1:${port}/`, "--noproxy '*'"),
        `bash -c ': > /dev/tcp/127.0.0.1/${port}' 2>/dev/null && echo tcp=open || echo tcp=refused`,
      ].join("; "),
    );
    expect(hits).toBe(before);
    // 127.0.0.1 and its integer spelling 2130706433 both arrive as loopback.
    expect(r.stdout.match(/'127\.0\.0\.1'[^\n]* is loopback/g)?.length).toBeGreaterThanOrEqual(2);
    expect(r.stdout).toContain("'169.254.169.254' is linkLocal");
    expect(r.stdout).toContain("'10.1.2.3' is private");
    expect(r.stdout).toContain("tcp=refused");
    expect(r.stderr).toMatch(/CONNECT tunnel failed, response 403/);
    expect(r.stdout).not.toContain("hello from the host");
  });

  it("guarded: a web.allowHosts entry is reachable, over HTTP proxy and SOCKS5 alike", async () => {
    const before = hits;
    const r = await sh(
      [
        curl(`http://127.0.0.1:${port}/`),
        curl(`http://127.0.0.1:${port}/`, `--socks5-hostname 127.0.0.1:3128 --noproxy ''`),
      ].join("; "),
      {},
      { allowHosts: [`127.0.0.1:${port}`] },
    );
    expect(r.stdout.match(/hello from the host/g)).toHaveLength(2);
    expect(hits).toBe(before + 2);
  });

  it("none: no network at all, not even through an allowHosts entry", async () => {
    const before = hits;
    const r = await sh(
      `${curl(`http://127.0.0.1:${port}/`)}; echo "proxy=\${HTTP_PROXY-unset}"`,
      { network: "none" },
      { allowHosts: [`127.0.0.1:${port}`] },
    );
    expect(r.stdout).toContain("proxy=unset");
    expect(r.stdout).toMatch(/curl=7/);
    expect(hits).toBe(before);
  });

  it("full: the proxy without address checks (the host's loopback too), still no direct route", async () => {
    const before = hits;
    const r = await sh(
      `${curl(`http://127.0.0.1:${port}/`)}; ${curl(`http://127.0.0.1:${port}/`, "--noproxy '*'")}`,
      { network: "full" },
    );
    expect(r.stdout.match(/hello from the host/g)).toHaveLength(1);
    expect(hits).toBe(before + 1);
  });

  it("an X11 display's TCP port is refused in every mode, full included", async () => {
    // Real listeners answering anything: 6010 (display :10, in the IANA range) and 6187,
    // a display above it that this host runs (its socket in /tmp/.X11-unix, as Xvfb :99 has).
    const displays = "/tmp/.X11-unix";
    const made = !existsSync(displays);
    if (made) mkdirSync(displays, { mode: 0o1777 });
    const socket = createNetServer().listen(join(displays, "X187"));
    const servers = [6010, 6187].map((p) => ({
      p,
      s: createServer((_req, res) => res.end("X server reached\n")),
    }));
    for (const { p, s: server } of servers)
      await new Promise<void>((done, fail) =>
        server.once("error", fail).listen(p, "127.0.0.1", () => done()),
      );
    try {
      for (const network of ["full", "guarded"] as const) {
        for (const p of [6010, 6187]) {
          const r = await sh(curl(`http://127.0.0.1:${p}/`), { network }, { allowHosts: [`127.0.0.1:${p}`] });
          expect(r.stdout, `${network} ${p}`).not.toContain("X server reached");
          expect(r.stdout, `${network} ${p}`).toContain("X11 display port");
          expect(r.stdout, `${network} ${p}`).toContain("http=403");
        }
      }
    } finally {
      for (const { s: server } of servers) server.close();
      socket.close();
      if (made) rmSync(displays, { recursive: true, force: true });
    }
  });
});

// Runs everywhere: the refusal is what a machine without bubblewrap gets.
describe("where the sandbox cannot start, nothing runs", () => {
  const missing = { bwrap: join(root, "no-such-bwrap") };

  it("runShell, runSandboxed and startShell refuse with the fix named", async () => {
    const marker = join(ws, "ran-unsandboxed");
    const refusal =
      /bubblewrap is not installed.*apt-get install bubblewrap.*"shell": \{ "sandbox": "off" \}/;
    await expect(sh(`touch ${marker}`, missing)).rejects.toMatchObject({ code: "sandbox_unavailable" });
    await expect(sh(`touch ${marker}`, missing)).rejects.toThrow(refusal);
    await expect(
      runSandboxed({ file: "touch", args: [marker], cwd: ws, env, shellPolicy: missing }),
    ).rejects.toThrow(refusal);
    const bg = new BackgroundProcesses();
    await expect(
      bg.startShell({ command: `touch ${marker}`, check, cwd: ws, env, policy: missing }),
    ).rejects.toThrow(refusal);
    expect(bg.list()).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it('"sandbox": "off" runs unconfined (the operator\'s choice), still under bash without desktop variables', async () => {
    const outsideFile = join(root, "written-unsandboxed");
    const r = await sh(
      `echo "\${DISPLAY-unset}" > ${outsideFile}; cat ${outsideFile}`,
      { sandbox: "off" },
      undefined,
      {
        env: { ...env, DISPLAY: ":0" },
      },
    );
    expect(r.stdout).toBe("unset\n");
    expect(existsSync(outsideFile)).toBe(true);
  });
});

describeSandbox("a sandbox stopped at once leaves nothing behind", () => {
  it("start then stop, over and over: no sandboxed command outlives the stop", async () => {
    // bubblewrap's child only dies with its parent once it has armed --die-with-parent;
    // stopped during setup it would run on, orphaned. terminateGroup also ends such escapees.
    const bg = new BackgroundProcesses({ killGraceMs: 200 });
    const marker = `${process.pid}${Date.now() % 100000}`;
    const survivors = () =>
      execFileSync("ps", ["-eo", "args="], { encoding: "utf8" })
        .split("\n")
        .filter((line) => line.includes(`sleep 9${marker}`));
    try {
      for (let i = 0; i < 24; i++) {
        const started = await bg.startShell({
          command: `sleep 9${marker} & wait`,
          check,
          cwd: ws,
          env,
          policy: { network: "none" },
          sandbox: { workspace: ws, stateDir },
        });
        // Stop at a different point of bubblewrap's start each time (0–11 ms).
        if (i % 12) await new Promise((r) => setTimeout(r, i % 12));
        await bg.stop(started.id);
      }
      // Every stop has sent its SIGKILLs; wait for the kernel to carry them out (bounded).
      for (let i = 0; i < 750 && survivors().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(survivors()).toEqual([]);
    } finally {
      await bg.stopAll();
      for (const line of survivors()) console.error(`left running: ${line}`);
    }
  }, 60_000);
});

describeSandbox("PATH entries under /tmp bring back no socket", () => {
  it("PATH=…:/tmp, a dot-directory or a directory holding a socket is not shown; a plain tool directory is", async () => {
    // A session-bus-like socket in a directory of its own, and the X-like socket directory.
    const busDir = realpathSync(mkdtempSync(join(tmpdir(), "capgate-bus-")));
    const bus = join(busDir, "bus");
    const listener = createNetServer(() => undefined);
    await new Promise<void>((done) => listener.listen(bus, done));
    const dotDir = realpathSync(mkdtempSync(join(tmpdir(), ".capgate-dot-")));
    writeFileSync(join(dotDir, "tool"), "#!/bin/sh\necho dot\n", { mode: 0o755 });
    const toolDir = realpathSync(mkdtempSync(join(tmpdir(), "capgate-tools-")));
    writeFileSync(join(toolDir, "capgate-probe-tool"), "#!/bin/sh\necho tool-ran\n", { mode: 0o755 });
    try {
      const path = ["/tmp", busDir, dotDir, toolDir, env.PATH].join(":");
      const r = await sh(
        `for p in ${bus} ${dotDir}/tool; do if [ -e "$p" ]; then echo "visible $p"; else echo "hidden $p"; fi; done; echo "tmp: $(ls -A /tmp)"; capgate-probe-tool`,
        {},
        undefined,
        { env: { ...env, PATH: path } },
      );
      expect(r.stdout).toContain(`hidden ${bus}`);
      expect(r.stdout).toContain(`hidden ${dotDir}/tool`);
      expect(r.stdout).not.toContain("visible");
      // Only the plain tool directory came back under the private /tmp.
      // Under the private /tmp: the workspace's own directory and the plain tool directory, nothing else.
      const listed = r.stdout
        .slice(r.stdout.indexOf("tmp: ") + 5)
        .split("\n")
        .slice(0, -2);
      expect(listed.sort()).toEqual([root, toolDir].map((d) => d.slice("/tmp/".length)).sort());
      expect(r.stdout).toContain("tool-ran");
    } finally {
      listener.close();
      for (const d of [busDir, dotDir, toolDir]) rmSync(d, { recursive: true, force: true });
    }
  });
});

describeSandbox("round four's hide-list additions", () => {
  it("database, cloud-sync and token files and other browsers' profiles are unreadable", async () => {
    const files = [
      ".pgpass",
      ".my.cnf",
      ".config/rclone/rclone.conf",
      ".cache/huggingface/token",
      ".kaggle/kaggle.json",
      ".config/sops/age/keys.txt",
      ".config/BraveSoftware/Brave-Browser/Default/Cookies",
      "snap/firefox/common/.mozilla/firefox/profiles.ini",
    ];
    for (const f of files) {
      mkdirSync(join(home, f, ".."), { recursive: true });
      writeFileSync(join(home, f), `SECRET-${f}\n`);
    }
    const r = await sh(files.map((f) => `cat ~/${f} 2>/dev/null`).join("; "));
    expect(r.stdout).not.toContain("SECRET");
    // The hidden file inside an ordinary cache directory does not hide the directory's other files.
    writeFileSync(join(home, ".cache/huggingface/readme.txt"), "models live here\n");
    expect((await sh("cat ~/.cache/huggingface/readme.txt")).stdout).toBe("models live here\n");
  });
});
