import { createSocket } from "node:dgram";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import type { ExecuteContext } from "@capgate/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROWSER_RESOURCE_KEY } from "./session.js";
import { call, commandLine, panelContext, processesMentioning } from "./test-context.js";
import { type PageServer, startPageServer } from "./test-server.js";
import type { PanelData } from "./tools.js";

// Real Chromium against a real local server. Skipped only where Chromium is missing and
// CAPGATE_REQUIRE_SYSTEM_TESTS is unset (CI sets it, so there a missing browser fails).
const chromium = needs(["chromium"]);
// The network namespace Chromium runs in where bubblewrap and socat are installed.
const namespace = needs(["chromium", "bwrap", "socat"]);

let inner: PageServer; // a "private" service the page must never reach
let server: PageServer;
let ctx: ExecuteContext;
const pids = new Set<number>();
const profiles = new Set<string>();

/** Remember the browser of a result, so afterAll can prove every Chromium process is gone. */
function track(data: unknown): number {
  const pid = (data as PanelData).browserPid;
  expect(typeof pid).toBe("number");
  pids.add(pid!);
  const profile = commandLine(pid!)
    ?.find((arg) => arg.startsWith("--user-data-dir="))
    ?.slice("--user-data-dir=".length);
  if (profile) profiles.add(profile);
  return pid!;
}

beforeAll(async () => {
  inner = await startPageServer();
  server = await startPageServer(`${inner.url}/`);
  ctx = panelContext({ allowHosts: [`127.0.0.1:${server.port}`] });
});

afterAll(async () => {
  await ctx?.resources.closeAll();
  await server?.close();
  await inner?.close();
  for (const pid of pids) expect(commandLine(pid), `browser ${pid} still running`).toBeUndefined();
  for (const profile of profiles) {
    expect(processesMentioning(profile), profile).toEqual([]);
    expect(existsSync(profile), `profile ${profile} left behind`).toBe(false);
  }
});

describe("browser_panel without a browser", () => {
  it("refuses a private URL before launching anything", async () => {
    const bare = panelContext();
    for (const url of [
      `${server.url}/`,
      "http://169.254.169.254/",
      "http://[::ffff:127.0.0.1]/",
      "http://0x7f000001/",
    ]) {
      await expect(call("open", { url }, bare), url).rejects.toMatchObject({
        code: "policy_denied",
        property: "url",
      });
    }
    await expect(call("open", { url: "file:///etc/passwd" }, bare)).rejects.toMatchObject({
      code: "invalid_arguments",
    });
    expect(bare.resources.peek(BROWSER_RESOURCE_KEY)).toBeUndefined();
    expect(server.hits.size).toBe(0);
  });

  it("asks for open first, without launching, when no page is open", async () => {
    const bare = panelContext();
    for (const [tool, args] of [
      ["snapshot", {}],
      ["click", { target: "e1" }],
      ["type", { target: "e1", text: "x" }],
      ["screenshot", {}],
      ["back", {}],
    ] as const) {
      const result = await call(tool, args, bare);
      expect(result.success, tool).toBe(false);
      expect(result.summary, tool).toMatch(/No page is open.*browser_panel\.open/);
    }
    expect((await call("close", {}, bare)).summary).toMatch(/No browser was open/);
    expect(bare.resources.peek(BROWSER_RESOURCE_KEY)).toBeUndefined();
  });

  it("fails clearly, saying how to install Chromium, when the executable is missing", async () => {
    const missing = panelContext({
      allowHosts: ["127.0.0.1"],
      services: { browserExecutable: "/nonexistent/chromium" },
    });
    const result = await call("open", { url: "http://127.0.0.1/" }, missing);
    expect(result.success).toBe(false);
    expect(result.summary).toMatch(
      /no Chromium at \/nonexistent\/chromium.*never downloads one.*apt-get install chromium/,
    );
    expect(missing.resources.peek(BROWSER_RESOURCE_KEY)).toBeUndefined();
  });
});

describe.skipIf(chromium.skip)(`browser_panel with real Chromium${chromium.note}`, () => {
  it("open → snapshot → click by text → type with submit → back → screenshot → close, in one reused browser", async () => {
    const opened = await call("open", { url: `${server.url}/` }, ctx);
    expect(opened.success, opened.summary).toBe(true);
    expect(opened.summary).toContain("Title: Panel Home");
    expect(opened.summary).toContain('[e1] link "Search page" → /search');
    expect(opened.summary).toContain('button "Greet me"');
    expect(opened.summary).not.toContain("Hidden link");
    const pid = track(opened.data);
    const session = ctx.resources.peek(BROWSER_RESOURCE_KEY);
    expect(session).toBeDefined();

    const snap = await call("snapshot", {}, ctx);
    expect(snap.summary).toContain("Welcome to the panel");
    expect((snap.data as PanelData).browserPid).toBe(pid);

    const clicked = await call("click", { target: "Search page" }, ctx);
    expect(clicked.success, clicked.summary).toBe(true);
    expect(clicked.summary).toMatch(/^Clicked \[e1\] link "Search page"\./);
    expect((clicked.data as PanelData).url).toBe(`${server.url}/search`);
    expect(clicked.summary).toMatch(/textbox "Query" \(placeholder "Type a word"\)/);

    const typed = await call("type", { target: "Query", text: "capgate", submit: true }, ctx);
    expect(typed.success, typed.summary).toBe(true);
    expect(typed.summary).toMatch(/^Typed "capgate" into \[e\d+\] textbox "Query" and pressed Enter\./);
    expect((typed.data as PanelData).url).toBe(`${server.url}/results?q=capgate&color=red`);

    const result = await call("snapshot", {}, ctx);
    expect(result.summary).toContain("Title: Results for capgate");
    expect(result.summary).toContain("You searched for capgate (red).");

    const back = await call("back", {}, ctx);
    expect(back.success, back.summary).toBe(true);
    expect((back.data as PanelData).url).toBe(`${server.url}/search`);

    const shot = await call("screenshot", {}, ctx);
    expect(shot.success, shot.summary).toBe(true);
    const saved = shot.data as { path: string; absolutePath: string; width: number; height: number };
    expect(saved.path).toMatch(/^\.capgate\/screenshots\/.+\.png$/);
    const png = readFileSync(join(ctx.workspace, saved.path));
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
    expect([saved.width, saved.height]).toEqual([1280, 800]);
    // The same picture as MCP image content, byte for byte.
    const image = shot.content?.find((c) => c.type === "image");
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(Buffer.from((image as { data: string }).data, "base64").equals(png)).toBe(true);
    expect(shot.summary).toContain(`1280×800 PNG screenshot of ${server.url}/search to ${saved.path}`);
    const named = await call("screenshot", { path: "shots/search.png" }, ctx);
    expect(named.success).toBe(true);
    expect(readFileSync(join(ctx.workspace, "shots/search.png")).subarray(1, 4).toString()).toBe("PNG");

    // Every call used the same browser process and session object.
    expect(ctx.resources.peek(BROWSER_RESOURCE_KEY)).toBe(session);
    expect((back.data as PanelData).browserPid).toBe(pid);

    const closed = await call("close", {}, ctx);
    expect(closed.success).toBe(true);
    expect(closed.summary).toMatch(/^Closed the browser \(1 tab\)/);
    expect(ctx.resources.peek(BROWSER_RESOURCE_KEY)).toBeUndefined();
    expect(commandLine(pid)).toBeUndefined();
    expect((await call("snapshot", {}, ctx)).summary).toMatch(/No page is open/);
  }, 60_000);

  it("close then open starts a new browser without the old history", async () => {
    const first = await call("open", { url: `${server.url}/about` }, ctx);
    const firstPid = track(first.data);
    await call("close", {}, ctx);
    const second = await call("open", { url: `${server.url}/` }, ctx);
    const secondPid = track(second.data);
    expect(secondPid).not.toBe(firstPid);
    expect(commandLine(firstPid)).toBeUndefined();
    const back = await call("back", {}, ctx);
    expect(back.success).toBe(false);
    expect(back.summary).toMatch(/no previous page/);
  }, 60_000);

  it("forgets a browser that died and starts a new one on the next open", async () => {
    const first = await call("open", { url: `${server.url}/about` }, ctx);
    const pid = track(first.data);
    process.kill(pid, "SIGKILL");
    // Playwright notices the lost connection; the session is then dropped from the host's resources.
    for (let i = 0; i < 200 && ctx.resources.peek(BROWSER_RESOURCE_KEY) !== undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await call("snapshot", {}, ctx)).summary).toMatch(/No page is open/);
    const again = await call("open", { url: `${server.url}/about` }, ctx);
    expect(again.success, again.summary).toBe(true);
    expect(track(again.data)).not.toBe(pid);
  }, 60_000);

  it("resolves targets by ref, CSS selector, placeholder and label, and explains ambiguity and misses", async () => {
    await call("open", { url: `${server.url}/search` }, ctx);
    expect((await call("type", { target: "#q", text: "one" }, ctx)).summary).toMatch(
      /^Typed "one" into \[e\d+\] textbox "Query"/,
    );
    expect((await call("type", { target: "Type a word", text: "two" }, ctx)).summary).toContain(
      'textbox "Query" (placeholder "Type a word") = "two"',
    );
    const chose = await call("type", { target: "Color", text: "green" }, ctx);
    expect(chose.summary).toMatch(/^Chose "green" in \[e\d+\] combobox "Color"/);
    expect(chose.summary).toContain('combobox "Color" (2 options) = "green"');
    const noSuch = await call("type", { target: "Color", text: "purple" }, ctx);
    expect(noSuch.success).toBe(false);
    expect(noSuch.summary).toMatch(/combobox "Color" has no option "purple"\. Its options: "red", "green"\./);
    const ticked = await call("click", { target: "Exact match" }, ctx);
    expect(ticked.summary).toMatch(/checkbox "Exact match" \[checked\]/);
    const wrong = await call("type", { target: "Go", text: "x" }, ctx);
    expect(wrong.success).toBe(false);
    expect(wrong.summary).toMatch(
      /No field that takes text matches target "Go".*\nFields on the page:\n\[e\d+\] textbox "Query"/s,
    );

    await call("open", { url: `${server.url}/ambiguous` }, ctx);
    const ambiguous = await call("click", { target: "Read more" }, ctx);
    expect(ambiguous.success).toBe(false);
    expect(ambiguous.summary).toMatch(
      /^Target "Read more" is ambiguous: 2 elements match by exact name\. Use the ref/,
    );
    const refs = [...ambiguous.summary.matchAll(/^\[(e\d+)\] link "Read more" → (\/\w+)$/gm)];
    expect(refs.map((m) => m[2])).toEqual(["/about", "/search"]);
    const second = await call("click", { target: `[${refs[1]![1]}]` }, ctx);
    expect((second.data as PanelData).url).toBe(`${server.url}/search`);

    // The refs of the previous page mean nothing here.
    const stale = await call("click", { target: "e99" }, ctx);
    expect(stale.summary).toMatch(
      /^No element has ref "e99" on the current page.*new browser_panel\.snapshot/,
    );
    const none = await call("click", { target: "Launch rockets" }, ctx);
    expect(none.summary).toMatch(
      /^No element matches target "Launch rockets" \(tried ref, exact name, css selector, partial name, exact text\)\.\nInteractive elements on the page:\n\[e\d+\] textbox "Query"/,
    );

    // Names match without regard to case; text that no control carries is found as plain text.
    await call("open", { url: `${server.url}/` }, ctx);
    const greeted = await call("click", { target: "greet me" }, ctx);
    expect(greeted.summary).toContain("Hello, clicked!");
    const tapped = await call("click", { target: "Tap here" }, ctx);
    expect(tapped.summary).toMatch(/^Clicked \[e\d+\] clickable "Tap here"\./);
    expect(tapped.summary).toContain("Tapped!");
  }, 60_000);

  it("sends everything the page loads through the network guard: subresources, links and redirects", async () => {
    const sneaky = await call("open", { url: `${server.url}/subresource` }, ctx);
    expect(sneaky.success).toBe(true);
    expect(sneaky.summary).toMatch(
      new RegExp(
        // The image and the fetch, whichever reached the guard first.
        `Blocked by the network guard: ${inner.url}/(pixel\\.png|api) \\(and 1 more request to that host\\) — host '127\\.0\\.0\\.1' is loopback`,
      ),
    );
    const link = await call("click", { target: "Internal admin" }, ctx);
    expect(link.summary).toContain(`Blocked by the network guard: ${inner.url}/admin`);
    expect(link.summary).toContain("Title: Blocked by capgate's network guard");

    const metadata = await call(
      "open",
      { url: `${server.url}/redirect?to=http://169.254.169.254/latest/meta-data/` },
      ctx,
    );
    expect(metadata.success).toBe(false);
    expect(metadata.summary).toContain(
      "Blocked by the network guard: http://169.254.169.254/latest/meta-data/",
    );
    const toInner = await call(
      "open",
      { url: `${server.url}/redirect?to=${encodeURIComponent(`${inner.url}/x`)}` },
      ctx,
    );
    expect(toInner.success).toBe(false);
    expect(toInner.summary).toContain(`Blocked by the network guard: ${inner.url}/x`);
    expect(inner.hits.size).toBe(0);
  }, 60_000);

  it("sends loopback through the guard even where Playwright is told to let Chromium bypass it", async () => {
    const name = "PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK";
    const before = process.env[name];
    process.env[name] = "1";
    const own = panelContext({ allowHosts: [`127.0.0.1:${server.port}`] });
    try {
      const sneaky = await call("open", { url: `${server.url}/subresource` }, own);
      track(sneaky.data);
      expect(sneaky.summary).toContain(`Blocked by the network guard: ${inner.url}/pixel.png`);
      expect(inner.hits.size).toBe(0);
    } finally {
      if (before === undefined) delete process.env[name];
      else process.env[name] = before;
      await own.resources.closeAll();
    }
  }, 60_000);

  it("sends no STUN, TURN or ICE packet around the guard: WebRTC gathers no candidate and reaches no local UDP port", async () => {
    const socket = createSocket("udp4");
    const packets: string[] = [];
    socket.on("message", (message, from) =>
      packets.push(`${from.address}:${from.port} ${message.length} bytes`),
    );
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    try {
      const { port } = socket.address();
      const opened = await call("open", { url: `${server.url}/webrtc?port=${port}` }, ctx);
      expect(opened.success).toBe(true);
      // STUN retransmits and ICE checks repeat for seconds: give them time to arrive.
      await new Promise((resolve) => setTimeout(resolve, 4000));
      const page = await call("snapshot", {}, ctx);
      expect(page.summary).toContain("candidates: none");
      expect(packets).toEqual([]);
    } finally {
      socket.close();
    }
  }, 60_000);

  it.skipIf(namespace.skip)(
    `runs Chromium in a network namespace of its own, whose one way out is the proxy${namespace.note}`,
    async () => {
      const opened = await call("open", { url: `${server.url}/` }, ctx);
      expect(opened.success).toBe(true);
      const pid = track(opened.data);
      expect(readlinkSync(`/proc/${pid}/ns/net`)).not.toBe(readlinkSync("/proc/self/ns/net"));
    },
    60_000,
  );

  it.skipIf(namespace.skip)(
    `gives Chromium no way to the desktop's and the session's services (buses, display, sound), no TLS key log and none of the host's secrets${namespace.note}`,
    async () => {
      const names = [
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        "PULSE_SERVER",
        "DISPLAY",
        "SSLKEYLOGFILE",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
      ];
      const before = names.map((name) => process.env[name]);
      for (const name of names)
        process.env[name] =
          name === "DISPLAY"
            ? ":99"
            : name === "XDG_RUNTIME_DIR"
              ? "/tmp/capgate-no-such-runtime-dir"
              : "unix:path=/tmp/capgate-no-such-bus";
      const own = panelContext({ allowHosts: [`127.0.0.1:${server.port}`] });
      try {
        const opened = await call("open", { url: `${server.url}/` }, own);
        const pid = track(opened.data);
        // Chromium overwrites its own environ (process titles): read what the script that
        // started it in the namespace got, which Chromium inherited.
        const parent = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1];
        const environment = readFileSync(`/proc/${parent}/environ`, "utf8").split("\0");
        expect(environment.some((v) => v.startsWith("PATH="))).toBe(true);
        for (const name of names)
          expect(
            environment.filter((v) => v.startsWith(`${name}=`)),
            name,
          ).toEqual([]);
        // /run (the system bus, $XDG_RUNTIME_DIR) is an empty tmpfs there.
        expect(readdirSync(`/proc/${pid}/root/run`)).toEqual([]);
      } finally {
        names.forEach((name, i) => {
          if (before[i] === undefined) delete process.env[name];
          else process.env[name] = before[i];
        });
        await own.resources.closeAll();
      }
    },
    60_000,
  );

  it.skipIf(namespace.skip)(
    `sends no multicast DNS for a .local name a page picks${namespace.note}`,
    async () => {
      // Chromium looks a remote candidate's .local name up by multicast DNS, whatever the
      // WebRTC preference says: only the namespace keeps those queries in.
      const socket = createSocket({ type: "udp4", reuseAddr: true });
      const queries: string[] = [];
      socket.on("message", (message, from) => {
        if (message.includes("capgate-chosen-name")) queries.push(`${from.address}:${from.port}`);
      });
      await new Promise<void>((resolve) => socket.bind(5353, "0.0.0.0", resolve));
      try {
        // Joined on every IPv4 interface: the queries leave by the machine's own address.
        const addresses = Object.values(networkInterfaces())
          .flat()
          .filter((i) => i?.family === "IPv4")
          .map((i) => i!.address);
        for (const address of addresses) socket.addMembership("224.0.0.251", address);
        const opened = await call("open", { url: `${server.url}/webrtc?port=9999` }, ctx);
        expect(opened.success).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 3000));
        expect(queries).toEqual([]);
      } finally {
        socket.close();
      }
    },
    60_000,
  );

  it("answers dialogs, follows new tabs and reports HTTP errors", async () => {
    await call("open", { url: `${server.url}/dialog` }, ctx);
    const alerted = await call("click", { target: "Alert" }, ctx);
    expect(alerted.summary).toContain("Dialog alert: Hi there (answered automatically)");

    await call("open", { url: `${server.url}/popup` }, ctx);
    const tab = await call("click", { target: "New tab" }, ctx);
    expect(tab.summary).toMatch(/Opened a new tab.*it is now the active page\./);
    expect((tab.data as PanelData).title).toBe("About");

    const missing = await call("open", { url: `${server.url}/missing` }, ctx);
    expect(missing.success).toBe(false);
    expect(missing.summary).toMatch(/^Opened .*\nHTTP 404 Not Found: the server answered with an error\./);
    expect(missing.summary).toContain("Nothing here.");
  }, 60_000);

  it("keeps screenshots inside the workspace", async () => {
    await call("open", { url: `${server.url}/` }, ctx);
    for (const path of ["../escape.png", "/etc/escape.png"]) {
      await expect(call("screenshot", { path }, ctx), path).rejects.toMatchObject({
        code: "policy_denied",
        property: "path",
      });
    }
    await expect(call("screenshot", { path: "notes.txt" }, ctx)).rejects.toMatchObject({
      code: "invalid_arguments",
    });
    mkdirSync(join(ctx.workspace, "real"));
    symlinkSync("/tmp", join(ctx.workspace, "out"));
    await expect(call("screenshot", { path: "out/escape.png" }, ctx)).rejects.toMatchObject({
      code: "policy_denied",
    });
    symlinkSync(join(ctx.workspace, "real", "target.png"), join(ctx.workspace, "link.png"));
    await expect(call("screenshot", { path: "link.png" }, ctx)).rejects.toMatchObject({
      code: "policy_denied",
    });
  }, 60_000);
});
