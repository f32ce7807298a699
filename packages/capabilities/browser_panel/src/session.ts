import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { scrubEnv } from "@capgate/sandbox";
import { minimalEnv, type ToolContext } from "@capgate/tools";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type GuardEvent, type GuardProxy, startGuardProxy } from "./guard-proxy.js";
import { type NamespacedChromium, namespacedChromium } from "./network-namespace.js";
import { newProfile, profileRoot, removeProfile } from "./profiles.js";

/** The `ctx.resources` key the browser session lives under. */
export const BROWSER_RESOURCE_KEY = "browser_panel";
export const DEFAULT_BROWSER_EXECUTABLE = "/usr/bin/chromium";

// Headless, no sandbox (containers), and nothing that phones home on its own.
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/**
 * The profile's preferences, written before Chromium starts. WebRTC may only use the proxy
 * (`disable_non_proxied_udp`): it then gathers no UDP candidate and sends no STUN, TURN or ICE
 * packet — those would otherwise reach any address around the guard, which sees only HTTP and
 * CONNECT. A preference, because Chromium ignores the command-line switch
 * `--force-webrtc-ip-handling-policy` (measured: Chromium 156 gathered UDP candidates and
 * sent ICE checks to 127.0.0.1 with it; a test sends a page's STUN, TURN and ICE at a UDP
 * port on 127.0.0.1 and fails on any packet). What no preference stops — multicast DNS for a
 * remote candidate's `.local` name — the network namespace does (`namespacedChromium`).
 */
const PROFILE_PREFERENCES = { webrtc: { ip_handling_policy: "disable_non_proxied_udp" } };

export const VIEWPORT = { width: 1280, height: 800 };

/** Beside `INHERITED_ENV` of @capgate/tools: what Chromium reads to render text as the host does. */
const CHROMIUM_ENV = [
  "LANGUAGE",
  "LC_MESSAGES",
  "LC_NUMERIC",
  "LC_TIME",
  "FONTCONFIG_FILE",
  "FONTCONFIG_PATH",
  "XDG_CACHE_HOME",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_DATA_DIRS",
];

/**
 * Chromium's environment: an allow-list of this process's (`minimalEnv`, what every tool
 * subprocess gets, and `CHROMIUM_ENV`), without what no sandboxed command gets either
 * (`SCRUBBED_ENV` of @capgate/sandbox: the display, D-Bus, the runtime dir, sound servers,
 * agents, a TLS key log). So no API key or token of the host's environment is in the browser
 * process a page drives, and a page cannot make Chromium talk to the desktop's services (audio
 * to the sound server, wake locks and notifications over D-Bus); headless, it needs none.
 */
function browserEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(scrubEnv(minimalEnv(process.env, CHROMIUM_ENV))))
    if (value !== undefined) env[name] = value;
  return env;
}

const MAX_EVENTS = 200;

/** Things that happened in the browser since the last tool result took them. */
export interface SessionEvents {
  network: GuardEvent[];
  dialogs: string[];
  popups: string[];
}

/**
 * One browser per host: Chromium with its own temporary profile (created here with the
 * preferences above, deleted when the browser closes or dies), and the page the tools act
 * on. Every connection goes through the guard proxy. Calls are serialised: one action at a time.
 */
export class BrowserSession {
  /** The allowHosts of the most recent call, read by the proxy for every request. */
  allowHosts: readonly string[] = [];
  #page: Page;
  #queue: Promise<unknown> = Promise.resolve();
  #events: SessionEvents = { network: [], dialogs: [], popups: [] };
  /** Hosts the pages asked for since the last takeEvents: only their guard events are reported. */
  #requestedHosts = new Set<string>();
  #closed = false;

  private constructor(
    readonly browser: Browser,
    readonly context: BrowserContext,
    page: Page,
    readonly proxy: GuardProxy,
    /** PID of the Chromium browser process. */
    readonly pid: number | undefined,
    /** The temporary profile directory, removed by `close`. */
    readonly profile: string,
    /** The network namespace's bridge, when Chromium runs in one. */
    readonly namespace: NamespacedChromium | undefined,
  ) {
    this.#page = page;
    this.#watch(page);
    context.on("request", (request) => {
      const host = hostOf(request.url());
      if (host) this.#requestedHosts.add(host);
    });
    context.on("page", (popup) => {
      // A link with target=_blank or window.open: the new tab becomes the one the tools act on.
      this.#watch(popup);
      this.#page = popup;
      this.#events.popups.push(popup.url());
    });
  }

  /**
   * Launch Chromium from `executable`, its profile in a private directory outside `workspace`
   * (`profileRoot`: `<stateDir>/browser` by default); a missing binary is a clear error saying
   * how to install one.
   */
  static async launch(
    executable: string,
    allowHosts: readonly string[],
    place: { stateDir: string; workspace: string },
  ): Promise<BrowserSession> {
    await assertExecutable(executable);
    const events: GuardEvent[] = [];
    let session: BrowserSession | undefined;
    const proxy = await startGuardProxy({
      allowHosts: () => session?.allowHosts ?? allowHosts,
      onEvent: (event) => {
        // Bounded: a page polling a refused address between calls must not grow this without end.
        const list = session ? session.#events.network : events;
        if (list.length < MAX_EVENTS) list.push(event);
      },
    });
    let context: BrowserContext | undefined;
    let profile: string | undefined;
    let namespace: NamespacedChromium | undefined;
    try {
      profile = await newProfile(await profileRoot(place.stateDir, place.workspace), PROFILE_PREFERENCES);
      // In a network namespace whose one way out is the proxy, where bubblewrap can make one.
      namespace = await namespacedChromium(executable, profile, proxy.port);
      // Loaded on first use: playwright-core is large and most runs never open a page.
      const { chromium } = await import("playwright-core");
      context = await chromium.launchPersistentContext(profile, {
        executablePath: namespace?.executable ?? executable,
        headless: true,
        args: CHROMIUM_ARGS,
        // Loopback through the proxy too, whatever the environment says (Playwright leaves
        // Chromium's own loopback bypass in place when PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK is set).
        proxy: { server: namespace?.proxyServer ?? proxy.url, bypass: "<-loopback>" },
        env: browserEnv(),
        viewport: VIEWPORT,
        acceptDownloads: false,
        serviceWorkers: "block",
        locale: "en-US",
      });
      const browser = context.browser();
      if (!browser) throw new Error("Playwright gave no browser for the persistent context");
      const page = context.pages()[0] ?? (await context.newPage());
      session = new BrowserSession(
        browser,
        context,
        page,
        proxy,
        await browserPid(browser),
        profile,
        namespace,
      );
      session.allowHosts = allowHosts;
      session.#events.network.push(...events);
      return session;
    } catch (error) {
      await context?.close().catch(() => undefined);
      await namespace?.close();
      if (profile) await removeProfile(profile);
      await proxy.close();
      throw new Error(
        `Chromium at ${executable} could not be started: ${(error as Error).message.split("\n")[0]}`,
        {
          cause: error,
        },
      );
    }
  }

  get page(): Page {
    return this.#page;
  }

  get closed(): boolean {
    return this.#closed || !this.browser.isConnected();
  }

  /** Run `action` after every earlier one has finished. */
  run<T>(action: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(action, action);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Events since the last call, cleared. Guard events are kept only for hosts the pages
   * requested: Chromium's own background traffic (autofill, safe browsing) also meets the
   * guard, but it is not something the model did.
   */
  takeEvents(): SessionEvents {
    const events = this.#events;
    const requested = this.#requestedHosts;
    this.#events = { network: [], dialogs: [], popups: [] };
    this.#requestedHosts = new Set();
    return { ...events, network: events.network.filter((e) => requested.has(hostOf(e.url) ?? "")) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Closing the context ends every Chromium process (or finds them gone); then the profile goes.
    await this.context.close().catch(() => undefined);
    await this.namespace?.close();
    await this.proxy.close();
    await removeProfile(this.profile);
  }

  #watch(page: Page): void {
    page.on("dialog", (dialog) => {
      if (this.#events.dialogs.length < MAX_EVENTS)
        this.#events.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      // Nobody can answer a dialog in a headless panel: accept alerts, decline the rest.
      void (dialog.type() === "alert" ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
    });
    page.on("close", () => {
      if (this.#page !== page) return;
      const open = this.context.pages().filter((p) => !p.isClosed());
      const last = open[open.length - 1];
      if (last) this.#page = last;
    });
  }
}

/** The session of this host, launching Chromium on first use (open does this; the other tools never launch). */
export async function acquireSession(ctx: ToolContext): Promise<BrowserSession> {
  const allowHosts = ctx.policy.web?.allowHosts ?? [];
  const existing = ctx.resources.peek<BrowserSession>(BROWSER_RESOURCE_KEY);
  if (existing?.closed) await ctx.resources.release(BROWSER_RESOURCE_KEY);
  const session = await ctx.resources.acquire(
    BROWSER_RESOURCE_KEY,
    async () => {
      const created = await BrowserSession.launch(
        ctx.services.browserExecutable ?? DEFAULT_BROWSER_EXECUTABLE,
        allowHosts,
        { stateDir: ctx.stateDir, workspace: ctx.workspace },
      );
      // A crashed or killed browser is forgotten, so the next open starts a new one.
      created.browser.on("disconnected", () => {
        if (ctx.resources.peek(BROWSER_RESOURCE_KEY) === created)
          void ctx.resources.release(BROWSER_RESOURCE_KEY);
      });
      return created;
    },
    (s) => s.close(),
  );
  session.allowHosts = allowHosts;
  return session;
}

/** The open session, or undefined; never launches a browser. */
export function currentSession(ctx: ToolContext): BrowserSession | undefined {
  const session = ctx.resources.peek<BrowserSession>(BROWSER_RESOURCE_KEY);
  if (!session || session.closed) return undefined;
  session.allowHosts = ctx.policy.web?.allowHosts ?? [];
  return session;
}

async function assertExecutable(executable: string): Promise<void> {
  try {
    await access(executable, constants.X_OK);
  } catch {
    throw new Error(
      `no Chromium at ${executable}. browser_panel drives a system Chromium and never downloads one: install it (Debian/Ubuntu: apt-get install chromium; Fedora: dnf install chromium; macOS: brew install --cask chromium) or point the host's browser executable setting (services.browserExecutable) at an installed Chrome or Chromium.`,
    );
  }
}

/** The browser process id, from the DevTools protocol (Playwright does not expose the process of a launched browser). */
async function browserPid(browser: Browser): Promise<number | undefined> {
  try {
    const cdp = await browser.newBrowserCDPSession();
    const info = (await cdp.send("SystemInfo.getProcessInfo")) as {
      processInfo: { type: string; id: number }[];
    };
    await cdp.detach();
    return info.processInfo.find((p) => p.type === "browser")?.id;
  } catch {
    return undefined;
  }
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
