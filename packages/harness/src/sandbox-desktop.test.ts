// A desktop is present — a real Xvfb display, listeners standing for the D-Bus session bus
// ($XDG_RUNTIME_DIR/bus and an abstract DBUS_SESSION_BUS_ADDRESS) and Wayland
// ($XDG_RUNTIME_DIR/wayland-0), all named in the environment the commands get — and fake
// openers come first on PATH, each trying to reach all of them and to leave a marker outside
// the workspace. A corpus of bypass forms goes through the real paths (shell.run, verify,
// code.run) with the sandbox on: nothing may reach the display or the sockets, no marker may
// appear. The same corpus with the sandbox off proves the detectors fire. Then 40+ harmless
// look-alikes must still run inside the sandbox.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVerify } from "@capgate/loop";
import { closeEgressProxies } from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import { needs } from "@capgate/test-system-parts";
import { createToolContext } from "@capgate/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "./harness.js";

const system = needs(["bwrap", "socat", "xvfb", "xdpyinfo", "curl"]);
const describeDesktop = (name: string, body: () => void) =>
  describe.skipIf(system.skip)(name + system.note, body);

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-desktop-")));
const ws = join(root, "ws");
const bin = join(root, "bin");
const outside = join(root, "outside");
const runtimeDir = join(root, "run-user");
const stateDir = join(root, "state");
const busPath = join(runtimeDir, "bus");
const waylandPath = join(runtimeDir, "wayland-0");
const abstractBus = `capgate-test-bus-${process.pid}`;
const outsideMarker = join(outside, "opened.log");

/** Connections each stand-in received; all must stay 0 with the sandbox on. */
const hits = { x11: 0, bus: 0, abstractBus: 0, wayland: 0 };
const total = () => hits.x11 + hits.bus + hits.abstractBus + hits.wayland;

let xvfb: ChildProcess | undefined;
let realDisplay = "";
let display = 0;
const servers: Server[] = [];
let web: HttpServer;
let webPort = 0;

const OPENERS = [
  "xdg-open",
  "gio",
  "sensible-browser",
  "x-www-browser",
  "www-browser",
  "chromium",
  "firefox",
  "google-chrome",
  "gtk-launch",
  "gdbus",
  "dbus-send",
  "kde-open",
  "gnome-open",
  "notify-send",
  "open",
];

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
}

/** A counting listener; `forward` passes the connection on (the X11 stand-in forwards to Xvfb). */
async function standIn(path: string, count: () => void, forward?: string): Promise<void> {
  const server = createServer((socket) => {
    count();
    if (!forward) return void socket.destroy();
    const upstream = connect(forward);
    socket.pipe(upstream).pipe(socket);
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  await listen(server, path);
  servers.push(server);
}

async function startXvfb(): Promise<void> {
  const child = spawn(
    "/usr/bin/Xvfb",
    ["-displayfd", "3", "-nolisten", "tcp", "-noreset", "-screen", "0", "640x480x24"],
    {
      stdio: ["ignore", "ignore", "ignore", "pipe"],
      detached: true,
    },
  );
  xvfb = child;
  const fd = child.stdio[3] as NodeJS.ReadableStream;
  realDisplay = await new Promise<string>((resolve, reject) => {
    let out = "";
    fd.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", () => reject(new Error("Xvfb exited")));
  });
}

/** The display the commands are told about: a counting front for Xvfb, on the path socket AND the abstract one. */
async function startDisplayFront(): Promise<void> {
  const target = `/tmp/.X11-unix/X${realDisplay}`;
  for (let n = 200 + (process.pid % 300); n < 1000; n++) {
    if (existsSync(`/tmp/.X11-unix/X${n}`)) continue;
    try {
      await standIn(`\0/tmp/.X11-unix/X${n}`, () => hits.x11++, target);
    } catch {
      continue;
    }
    await standIn(`/tmp/.X11-unix/X${n}`, () => hits.x11++, target);
    display = n;
    return;
  }
  throw new Error("no free display number");
}

function writeOpener(name: string): void {
  const script = `#!/bin/bash
echo "${name} $*" >> '${outsideMarker}' 2>/dev/null
socat -u OPEN:/dev/null UNIX-CONNECT:'${busPath}' 2>/dev/null
socat -u OPEN:/dev/null UNIX-CONNECT:'${waylandPath}' 2>/dev/null
socat -u OPEN:/dev/null ABSTRACT-CONNECT:'${abstractBus}' 2>/dev/null
xdpyinfo -display :${display} >/dev/null 2>&1
DISPLAY=:${display} xdpyinfo >/dev/null 2>&1
exit 0
`;
  writeFileSync(join(bin, name), script);
  chmodSync(join(bin, name), 0o755);
}

let harnessOn: Harness;
let harnessOff: Harness;

async function makeHarness(sandbox: "on" | "off"): Promise<Harness> {
  return createHarness({
    workspace: ws,
    stateDir,
    config: {
      shell: { sandbox },
      web: { allowHosts: [`127.0.0.1:${webPort}`] },
      env: { inherit: ["DBUS_SESSION_BUS_ADDRESS", "BROWSER"] },
    },
    processEnv: {
      PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
      HOME: root,
      LANG: "C.UTF-8",
      DISPLAY: `:${display}`,
      WAYLAND_DISPLAY: "wayland-0",
      XDG_RUNTIME_DIR: runtimeDir,
      DBUS_SESSION_BUS_ADDRESS: `unix:abstract=${abstractBus}`,
      BROWSER: "firefox",
    },
  });
}

beforeAll(async () => {
  for (const dir of [ws, bin, outside, runtimeDir, stateDir]) mkdirSync(dir, { recursive: true });
  execFileSync("git", ["init", "-q", ws]);
  writeFileSync(join(ws, "README.md"), "open the door\nopen a file\n");
  writeFileSync(join(ws, "Makefile"), "all:\n\t@echo built\n");
  await startXvfb();
  await startDisplayFront();
  await standIn(busPath, () => hits.bus++);
  await standIn(`\0${abstractBus}`, () => hits.abstractBus++);
  await standIn(waylandPath, () => hits.wayland++);
  for (const name of OPENERS) writeOpener(name);
  web = createHttpServer((_req, res) => res.end("allowed host says hi\n"));
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  webPort = (web.address() as AddressInfo).port;
  harnessOn = await makeHarness("on");
  harnessOff = await makeHarness("off");
}, 30_000);

afterAll(async () => {
  // The display first: nothing below may keep it alive if it fails.
  if (xvfb?.pid) {
    try {
      process.kill(-xvfb.pid, "SIGKILL");
    } catch {}
  }
  for (const s of servers) s.close();
  web?.close();
  try {
    await Promise.allSettled([harnessOn?.close(), harnessOff?.close()]);
    await closeEgressProxies();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const X = () => `:${display}`;

/**
 * Every class of issue 9 and the forms docs/security.md used to call out of scope. Each is
 * a command line the model could send; the parser may deny it (first layer) or let it run
 * — either way nothing may reach the desktop.
 */
const SHELL_CORPUS = (): string[] => [
  // 1. bash-only grammar
  "xdg-open https://example.com &> /dev/null",
  "(( 1 )) && xdg-open https://example.com",
  // 2. wrapper options
  "env --chd=/ xdg-open https://example.com",
  "timeout --sig=KILL 5 xdg-open https://example.com",
  "nice --adj=1 xdg-open https://example.com",
  "env -S 'xdg-open https://example.com'",
  "eval -- xdg-open https://example.com",
  "setarch x86_64 xdg-open https://example.com",
  "prlimit --nofile=100 xdg-open https://example.com",
  "unshare -r xdg-open https://example.com",
  // 3. the command word from data, stdin, indirection, interpreters
  "echo xdg-open | xargs -I{} sh -c '{} https://example.com'",
  "echo https://example.com | xargs xdg-open",
  "find . -maxdepth 0 -exec xdg-open {} \\;",
  "echo 'xdg-open https://example.com' | bash",
  "bash /dev/stdin <<< 'xdg-open https://example.com'",
  "PS4='$(xdg-open https://example.com)' bash -xc true",
  `python3 -c "__import__('web'+'browser').open('https://example.com')"`,
  "python3 -m webbrowser https://example.com",
  // 4. openers and tools not on any list
  "gtk-launch firefox",
  "gdbus call --session --dest org.freedesktop.portal.Desktop --object-path /org/freedesktop/portal/desktop --method org.freedesktop.portal.OpenURI.OpenURI '' https://example.com {}",
  "dbus-send --session --dest=org.freedesktop.portal.Desktop / x",
  "notify-send hi",
  // out of scope for any parser: files the model wrote, renamed/symlinked/copied binaries, interpreters
  "printf '#!/bin/sh\\nxdg-open https://example.com\\n' > s.sh && chmod +x s.sh && ./s.sh",
  'cp "$(command -v firefox)" ./ff && ./ff https://example.com',
  'ln -sf "$(command -v chromium)" ./viewer && ./viewer https://example.com',
  `perl -e 'system("xdg-open https://example.com")'`,
  `node -e 'require("child_process").execSync("xdg-open https://example.com")'`,
  `awk 'BEGIN { system("xdg-open https://example.com") }'`,
  "git -c alias.x='!xdg-open https://example.com' x",
  "LESSOPEN='|xdg-open %s' less README.md",
  "make --eval='x: ; @xdg-open https://example.com' x",
  "ssh -o ProxyCommand='xdg-open https://example.com' -o BatchMode=yes nohost",
  // direct clients of the display and the buses, by path and by abstract name
  `xdpyinfo -display ${X()}`,
  `DISPLAY=${X()} xdpyinfo`,
  `socat -u OPEN:/dev/null UNIX-CONNECT:${busPath}`,
  `socat -u OPEN:/dev/null UNIX-CONNECT:${waylandPath}`,
  `socat -u OPEN:/dev/null ABSTRACT-CONNECT:${abstractBus}`,
  `python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0/tmp/.X11-unix/X${display}')"`,
  `node -e 'require("net").connect("/tmp/.X11-unix/X${display}")'`,
  `echo hi >> ${outsideMarker}`,
];

const CODE_CORPUS = (): { language: "javascript" | "python"; source: string }[] => [
  {
    language: "javascript",
    source: 'import { execSync } from "node:child_process";\nexecSync("xdg-open https://example.com");',
  },
  {
    language: "javascript",
    source: `import { connect } from "node:net";\nconst s = connect("\\0/tmp/.X11-unix/X${display}");\ns.on("error", () => {});\nconnect(${JSON.stringify(busPath)}).on("error", () => {});\nconnect("\\0${abstractBus}").on("error", () => {});\nawait new Promise((r) => setTimeout(r, 200));`,
  },
  {
    language: "python",
    source:
      "import subprocess\nsubprocess.run(['xdg-open', 'https://example.com'])\nsubprocess.run(['firefox'])",
  },
];

async function runCorpus(h: Harness): Promise<{ denied: number; ran: number; hints: number }> {
  let denied = 0;
  let ran = 0;
  let hints = 0;
  const count = (error: unknown) => {
    if (CapgateError.isInstance(error) && error.code === "policy_denied") {
      denied++;
      if (error.message.includes("browser_panel")) hints++;
      return;
    }
    throw error;
  };
  for (const command of SHELL_CORPUS()) {
    try {
      await h.callTool("shell.run", { command, timeout_ms: 15_000 });
      ran++;
    } catch (error) {
      count(error);
    }
  }
  for (const args of CODE_CORPUS()) {
    await h.callTool("code.run", { ...args, timeout_ms: 15_000 });
    ran++;
  }
  const ctx = createToolContext({
    workspace: h.workspace,
    env: h.environment.env,
    policy: h.environment.policy,
    stateDir: h.stateDir,
  });
  for (const command of [
    "./s.sh",
    "make --eval='v: ; @xdg-open https://example.com' v",
    `xdpyinfo -display ${X()}`,
  ]) {
    const outcome = await runVerify({ command, timeoutMs: 15_000, ctx });
    if (outcome.denied) denied++;
    else ran++;
  }
  return { denied, ran, hints };
}

describeDesktop("with a desktop present", () => {
  it("the detectors work: a real X client reaches the display from the host", async () => {
    const before = hits.x11;
    // Asynchronously: the counting front runs on this process's event loop.
    await new Promise((resolve, reject) =>
      execFile("xdpyinfo", ["-display", X()], (error) => (error ? reject(error) : resolve(undefined))),
    );
    expect(hits.x11).toBe(before + 1);
  });

  it("nothing in the corpus reaches the display, the buses or Wayland, and no marker appears outside", async () => {
    const start = { ...hits };
    const result = await runCorpus(harnessOn);
    expect(hits).toEqual(start);
    expect(existsSync(outsideMarker)).toBe(false);
    // Both layers were exercised: the parser denied some forms (with the browser_panel
    // hint) and the rest ran — in the sandbox, where they found no desktop.
    expect(result.denied).toBeGreaterThan(0);
    expect(result.hints).toBeGreaterThan(0);
    expect(result.ran).toBeGreaterThan(10);
  }, 300_000);

  it("the same corpus with the sandbox off does reach the desktop (so the test above can fail)", async () => {
    const before = total();
    await runCorpus(harnessOff);
    expect(total()).toBeGreaterThan(before);
    expect(hits.x11).toBeGreaterThan(0);
    expect(existsSync(outsideMarker)).toBe(true);
  }, 300_000);
});

/** Harmless look-alikes: each must run inside the sandbox and succeed; `expect` is a regex on stdout. */
const LOOK_ALIKES = (): [string, RegExp?][] => [
  ['echo "open the door"', /^open the door\n$/],
  ["echo xdg-open", /^xdg-open\n$/],
  ["printf 'open %s\\n' file", /^open file\n$/],
  ["grep -c open README.md", /^2\n$/],
  ["grep -n 'open a' README.md", /^2:open a file\n$/],
  ["cat README.md | wc -l", /^2\n$/],
  ["git status --short", undefined],
  ["git log --oneline -1 2>/dev/null || echo no-commits", undefined],
  ["git rev-parse --is-inside-work-tree", /^true\n$/],
  ["node -e 'console.log(1 + 1)'", /^2\n$/],
  [`node -e 'console.log("open".length)'`, /^4\n$/],
  ["python3 -c 'print(\"open\")'", /^open\n$/],
  ["python3 -c 'import json; print(json.dumps({\"a\": 1}))'", /^\{"a": 1\}\n$/],
  ["ls /usr/bin | grep -c . ", /^\d+\n$/],
  ["echo written > notes.txt && cat notes.txt", /^written\n$/],
  ["mkdir -p src/lib && touch src/lib/a.ts && ls src/lib", /^a\.ts\n$/],
  ["echo data > /tmp/scratch && cat /tmp/scratch", /^data\n$/],
  ["command -v xdg-open", /xdg-open\n$/],
  ["type -t echo", /^builtin\n$/],
  ["which bash", /bash\n$/],
  ["seq 3 | paste -sd+ | bc", /^6\n$/],
  ["awk 'BEGIN { print 6 * 7 }'", /^42\n$/],
  ["sed -n 1p README.md", /^open the door\n$/],
  ["sort -r README.md | head -1", /^open the door\n$/],
  ["head -c 4 README.md; echo", /^open\n$/],
  ["tr a-z A-Z < README.md | head -1", /^OPEN THE DOOR\n$/],
  ["date +%Y | grep -c .", /^1\n$/],
  ["uname -s", /^Linux\n$/],
  ["id -u | grep -c .", /^1\n$/],
  ["pwd", /\/ws\n$/],
  ["echo $HOME | grep -c .", /^1\n$/],
  ["env | grep -c '^PATH='", /^1\n$/],
  ["make -s", /^built\n$/],
  ["perl -e 'print \"open\\n\"'", /^open\n$/],
  [
    "echo '{\"open\": true}' | python3 -c 'import sys, json; print(json.load(sys.stdin)[\"open\"])'",
    /^True\n$/,
  ],
  ["for i in 1 2 3; do echo $i; done | tail -1", /^3\n$/],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's ${x^^}, not a template
  ["x=open; echo ${x^^}", /^OPEN\n$/],
  ["[[ -f README.md ]] && echo yes", /^yes\n$/],
  ["(( 2 + 2 == 4 )) && echo four", /^four\n$/],
  ["echo {a,b}{1,2}", /^a1 a2 b1 b2\n$/],
  ["sleep 0.1 & wait; echo waited", /^waited\n$/],
  ["tar -cf /tmp/x.tar README.md && tar -tf /tmp/x.tar", /^README\.md\n$/],
  ["sha256sum README.md | cut -c1-8 | grep -c .", /^1\n$/],
  ["find . -maxdepth 1 -name README.md", /^\.\/README\.md\n$/],
  ["diff README.md README.md && echo same", /^same\n$/],
  [`curl -sS -m 10 http://127.0.0.1:${webPort}/`, /^allowed host says hi\n$/],
  ["echo 'the browser_panel opens pages'", /browser_panel/],
];

describeDesktop("harmless look-alikes still run inside the sandbox", () => {
  it("40+ ordinary commands succeed with the sandbox on", async () => {
    const cases = LOOK_ALIKES();
    expect(cases.length).toBeGreaterThanOrEqual(40);
    const failures: string[] = [];
    for (const [command, pattern] of cases) {
      try {
        const { result } = await harnessOn.callTool("shell.run", { command, timeout_ms: 20_000 });
        const data = result.data as { stdout: string; stderr: string; exitCode: number | null };
        if (!result.success || (pattern && !pattern.test(data.stdout))) {
          failures.push(`${command} → exit ${data.exitCode}: ${JSON.stringify(data.stdout)} ${data.stderr}`);
        }
      } catch (error) {
        failures.push(`${command} → ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
