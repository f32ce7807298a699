// Test helpers: a real Xvfb server, a headed Chromium window on it, and a page that reports
// the input it receives to a local HTTP server. Not part of the package's build.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** True when `name` is an executable on PATH. */
export function hasProgram(name: string): boolean {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** Poll `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stop a process group started with `detached: true`: SIGTERM, then SIGKILL if it lingers. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  }, 3_000);
  await exited;
  clearTimeout(timer);
}

export interface XServer {
  display: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Start Xvfb on a free display number (Xvfb picks it with -displayfd and tells us) and
 * wait until xdotool can talk to it. `-noreset`: without it the server resets (pointer back to
 * the centre) each time its last client — here each xdotool run — disconnects.
 */
export async function startXvfb(width = 1024, height = 768): Promise<XServer> {
  const child = spawn(
    "Xvfb",
    ["-displayfd", "3", "-screen", "0", `${width}x${height}x24`, "-nolisten", "tcp", "-noreset"],
    { stdio: ["ignore", "ignore", "pipe", "pipe"], detached: true },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const fd = child.stdio[3] as NodeJS.ReadableStream;
  let out = "";
  fd.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const number = await waitFor(
    "Xvfb to report its display number",
    () => {
      if (child.exitCode !== null) throw new Error(`Xvfb exited with ${child.exitCode}: ${stderr}`);
      const m = /^(\d+)\n/.exec(out);
      return m ? m[1] : undefined;
    },
    20_000,
  );
  const display = `:${number}`;
  await waitFor("the X server to answer", () => {
    try {
      execFileSync("xdotool", ["getdisplaygeometry"], {
        env: { ...process.env, DISPLAY: display },
        stdio: "pipe",
      });
      return true;
    } catch {
      return undefined;
    }
  });
  return { display, pid: child.pid!, stop: () => stopGroup(child) };
}

/** A display number with no X server behind it. */
export function unusedDisplay(): string {
  for (let n = 90; n < 200; n++) {
    if (!existsSync(`/tmp/.X11-unix/X${n}`) && !existsSync(`/tmp/.X${n}-lock`)) return `:${n}`;
  }
  throw new Error("no unused display number found");
}

export interface PageEvent {
  type: string;
  [key: string]: unknown;
}

export interface EventPage {
  url: string;
  events: PageEvent[];
  /** The first event (after `from`) that satisfies `match`. */
  next(match: (e: PageEvent) => boolean, from?: number, what?: string): Promise<PageEvent>;
  close(): Promise<void>;
}

// Fixed-position controls and a tall body; every input the page receives is POSTed back.
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>cua test page</title></head>
<body style="margin:0;height:4000px;font:16px sans-serif">
<button id="button" style="position:fixed;left:100px;top:100px;width:200px;height:80px">Press me</button>
<input id="field" style="position:fixed;left:100px;top:260px;width:400px;height:40px">
<script>
const send = (e) => fetch("/event", { method: "POST", body: JSON.stringify(e) });
const field = document.getElementById("field");
const button = document.getElementById("button");
let lastMove = 0;
addEventListener("mousemove", (e) => {
  if (Date.now() - lastMove < 30) return;
  lastMove = Date.now();
  send({ type: "mousemove", screenX: e.screenX, screenY: e.screenY, clientX: e.clientX, clientY: e.clientY });
});
button.addEventListener("click", (e) => send({ type: "click", target: "button", button: e.button }));
button.addEventListener("contextmenu", (e) => { e.preventDefault(); send({ type: "contextmenu", target: "button", button: e.button }); });
field.addEventListener("focus", () => send({ type: "focus", target: "field" }));
addEventListener("keydown", (e) => send({ type: "keydown", key: e.key, ctrl: e.ctrlKey, value: field.value }));
addEventListener("wheel", (e) => send({ type: "wheel", deltaX: e.deltaX, deltaY: e.deltaY }));
addEventListener("scroll", () => send({ type: "scroll", scrollY: scrollY }));
const rect = (el) => { const r = el.getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; };
send({ type: "ready", button: rect(button), field: rect(field) });
</script></body></html>`;

/** A local HTTP server on 127.0.0.1 serving the page and collecting its events. */
export async function startEventPage(): Promise<EventPage> {
  const events: PageEvent[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/event") {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        try {
          events.push(JSON.parse(body) as PageEvent);
        } catch {}
        res.end("ok");
      });
      return;
    }
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    events,
    next: (match, from = 0, what = "a page event") =>
      waitFor(what, () => events.slice(from).find(match), 15_000),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Browser {
  stop(): Promise<void>;
}

/** A headed Chromium app window at the top-left of `display`, showing `url`. */
export function startChromium(display: string, url: string, width = 1024, height = 768): Browser {
  const profile = mkdtempSync(join(tmpdir(), "capgate-cua-chromium-"));
  const child = spawn(
    "/usr/bin/chromium",
    [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--test-type", // no "unsupported command-line flag" bar over the page
      `--user-data-dir=${profile}`,
      "--window-position=0,0",
      `--window-size=${width},${height}`,
      `--app=${url}`,
    ],
    {
      stdio: "ignore",
      detached: true,
      env: { PATH: process.env.PATH, HOME: profile, DISPLAY: display },
    },
  );
  return {
    stop: async () => {
      await stopGroup(child);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
