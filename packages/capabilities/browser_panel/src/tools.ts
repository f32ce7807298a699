import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ArgsOf, ToolContext, ToolResult } from "@capgate/tools";
import { realWorkspace, resolveInWorkspace, toWorkspaceRelative } from "@capgate/workspace";
import type { Page, Response } from "playwright-core";
import { resolveTarget, settleAfter, shortError, waitForQuiet } from "./actions.js";
import type { manifest } from "./manifest.js";
import { acquireSession, BROWSER_RESOURCE_KEY, type BrowserSession, currentSession } from "./session.js";
import {
  FULL_SNAPSHOT,
  formatEvents,
  formatSnapshot,
  SHORT_SNAPSHOT,
  type SnapshotSize,
  takeSnapshot,
} from "./snapshot.js";
import type { PageSnapshot } from "./snapshot-types.js";

type Args<N extends string> = ArgsOf<typeof manifest, `browser_panel.${N}`>;

/** What the page tools return in `data`, for programs. */
export interface PanelData {
  title: string;
  url: string;
  /** HTTP status of the document, when the call loaded one. */
  status?: number;
  snapshot: PageSnapshot;
  /** The Chromium browser process, the same for every call until close. */
  browserPid?: number;
}

const NO_PAGE: ToolResult = {
  success: false,
  summary: "No page is open in the browser panel. Call browser_panel.open with a URL first.",
};

/** Time for one navigation or action, kept under the executor's timeout. */
function budget(ctx: ToolContext, cap: number): number {
  return Math.max(1_000, Math.min(cap, Math.floor(ctx.limits.timeoutMs * 0.8)));
}

export async function open(args: Args<"open">, ctx: ToolContext): Promise<ToolResult> {
  const session = await acquireSession(ctx);
  return session.run(async () => {
    session.takeEvents();
    let response: Response | null = null;
    try {
      response = await session.page.goto(args.url, {
        waitUntil: "domcontentloaded",
        timeout: budget(ctx, 30_000),
      });
    } catch (error) {
      return report(session, `Could not open ${args.url}: ${shortError(error)}`, { success: false });
    }
    await waitForQuiet(session.page);
    return report(session, `Opened ${args.url}.`, { response });
  });
}

export async function snapshot(_args: Args<"snapshot">, ctx: ToolContext): Promise<ToolResult> {
  const session = currentSession(ctx);
  if (!session) return NO_PAGE;
  return session.run(() => report(session, "", { size: FULL_SNAPSHOT }));
}

export async function click(args: Args<"click">, ctx: ToolContext): Promise<ToolResult> {
  const session = currentSession(ctx);
  if (!session) return NO_PAGE;
  return session.run(async () => {
    session.takeEvents();
    const page = session.page;
    const resolved = await resolveTarget(page, args.target, "click");
    if ("failure" in resolved) return { success: false, summary: resolved.failure };
    const what = describeTarget(resolved.element.ref, resolved.element.role, resolved.element.name);
    try {
      await settleAfter(
        page,
        () => resolved.locator.click({ timeout: budget(ctx, 10_000) }),
        budget(ctx, 30_000),
      );
    } catch (error) {
      return { success: false, summary: `Could not click ${what}: ${shortError(error)}` };
    }
    // The click opened a new tab, now the active page: let it load before reading it.
    if (session.page !== page) await waitForQuiet(session.page);
    return report(session, `Clicked ${what}.`);
  });
}

export async function type(args: Args<"type">, ctx: ToolContext): Promise<ToolResult> {
  const session = currentSession(ctx);
  if (!session) return NO_PAGE;
  return session.run(async () => {
    session.takeEvents();
    const page = session.page;
    const resolved = await resolveTarget(page, args.target, "type");
    if ("failure" in resolved) return { success: false, summary: resolved.failure };
    const { element, locator } = resolved;
    const what = describeTarget(element.ref, element.role, element.name);
    if (["checkbox", "radio", "button", "link", "switch", "file chooser"].includes(element.role)) {
      return {
        success: false,
        summary: `${what} does not take text. ${element.role === "file chooser" ? "Uploading files is not supported." : "Use browser_panel.click on it instead."}`,
      };
    }
    const timeout = budget(ctx, 10_000);
    try {
      if (element.tag === "select") {
        const options = await locator.evaluate((el) =>
          [...(el as HTMLSelectElement).options].map((o) => ({ label: o.label.trim(), value: o.value })),
        );
        const index = chooseOption(options, args.text);
        if (index < 0) {
          return {
            success: false,
            summary: `${what} has no option ${JSON.stringify(args.text)}. Its options: ${options.map((o) => JSON.stringify(o.label)).join(", ")}.`,
          };
        }
        await locator.selectOption({ index }, { timeout });
      } else {
        await locator.fill(args.text, { timeout });
      }
      if (args.submit)
        await settleAfter(page, () => locator.press("Enter", { timeout }), budget(ctx, 30_000));
    } catch (error) {
      return { success: false, summary: `Could not type into ${what}: ${shortError(error)}` };
    }
    const typed = `${element.tag === "select" ? "Chose" : "Typed"} ${JSON.stringify(shorten(args.text))} ${element.tag === "select" ? "in" : "into"} ${what}${args.submit ? " and pressed Enter" : ""}.`;
    return report(session, typed);
  });
}

export async function screenshot(args: Args<"screenshot">, ctx: ToolContext): Promise<ToolResult> {
  const session = currentSession(ctx);
  if (!session) return NO_PAGE;
  const requested = args.path ?? (await defaultScreenshotPath(ctx));
  const target = await resolveInWorkspace(ctx, requested, { forWrite: true, allowMissing: true });
  return session.run(async () => {
    const png = await session.page.screenshot({ type: "png", timeout: budget(ctx, 15_000) });
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, png);
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    const relative = toWorkspaceRelative(await realWorkspace(ctx.workspace), target);
    const summary = `Saved a ${width}×${height} PNG screenshot of ${session.page.url()} to ${relative} (${png.length.toLocaleString("en-US")} bytes).`;
    return {
      success: true,
      summary,
      // The picture itself too, so an MCP client (or a model that reads images) sees it.
      content: [
        { type: "text", text: summary },
        { type: "image", data: png.toString("base64"), mimeType: "image/png" },
      ],
      data: {
        path: relative,
        absolutePath: target,
        width,
        height,
        bytes: png.length,
        url: session.page.url(),
      },
    };
  });
}

export async function back(_args: Args<"back">, ctx: ToolContext): Promise<ToolResult> {
  const session = currentSession(ctx);
  if (!session) return NO_PAGE;
  return session.run(async () => {
    session.takeEvents();
    // The blank page every tab starts on is not a page to go back to.
    if (!(await hasPreviousPage(session.page))) {
      return report(session, "There is no previous page in this tab's history; the page did not change.", {
        success: false,
      });
    }
    let response: Response | null = null;
    try {
      response = await session.page.goBack({ waitUntil: "domcontentloaded", timeout: budget(ctx, 30_000) });
    } catch (error) {
      return { success: false, summary: `Could not go back: ${shortError(error)}` };
    }
    await waitForQuiet(session.page);
    return report(session, "Went back.", { response });
  });
}

export async function close(_args: Args<"close">, ctx: ToolContext): Promise<ToolResult> {
  const session = ctx.resources.peek<BrowserSession>(BROWSER_RESOURCE_KEY);
  if (!session) return { success: true, summary: "No browser was open; nothing to close." };
  const pages = session.closed ? 0 : session.context.pages().length;
  await ctx.resources.release(BROWSER_RESOURCE_KEY);
  return {
    success: true,
    summary: `Closed the browser (${pages} tab${pages === 1 ? "" : "s"}); cookies and history are gone. The next browser_panel.open starts a fresh one.`,
    data: { closed: true, browserPid: session.pid },
  };
}

/** Title, URL and snapshot of the active page, with what happened on the way. */
async function report(
  session: BrowserSession,
  headline: string,
  options: { response?: Response | null; success?: boolean; size?: SnapshotSize } = {},
): Promise<ToolResult> {
  const size = options.size ?? SHORT_SNAPSHOT;
  const page = session.page;
  const snap = await takeSnapshot(page, size);
  const status = options.response?.status();
  const httpError = status !== undefined && status >= 400;
  const events = formatEvents(session.takeEvents());
  const parts = [
    headline,
    httpError
      ? `HTTP ${status} ${options.response?.statusText() ?? ""}: the server answered with an error.`.replace(
          " :",
          ":",
        )
      : "",
    events,
    formatSnapshot(snap, size),
  ].filter(Boolean);
  const data: PanelData = {
    title: snap.title,
    url: snap.url,
    ...(status === undefined ? {} : { status }),
    snapshot: snap,
    ...(session.pid === undefined ? {} : { browserPid: session.pid }),
  };
  return { success: options.success ?? !httpError, summary: parts.join("\n"), data };
}

async function hasPreviousPage(page: Page): Promise<boolean> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const history = (await cdp.send("Page.getNavigationHistory")) as {
      currentIndex: number;
      entries: { url: string }[];
    };
    const previous = history.entries[history.currentIndex - 1];
    return previous !== undefined && previous.url !== "about:blank";
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}

/** Typing into a select chooses an option: by its label, else its value, else its label ignoring case. */
function chooseOption(options: { label: string; value: string }[], text: string): number {
  const wanted = text.trim();
  const byLabel = options.findIndex((o) => o.label === wanted);
  if (byLabel >= 0) return byLabel;
  const byValue = options.findIndex((o) => o.value === wanted);
  if (byValue >= 0) return byValue;
  return options.findIndex((o) => o.label.toLowerCase() === wanted.toLowerCase());
}

function describeTarget(ref: string, role: string, name: string): string {
  return `[${ref}] ${role}${name ? ` ${JSON.stringify(shorten(name))}` : ""}`;
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

async function defaultScreenshotPath(ctx: ToolContext): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  for (let n = 0; ; n++) {
    const candidate = `.capgate/screenshots/${stamp}${n === 0 ? "" : `-${n}`}.png`;
    const exists = await stat(
      await resolveInWorkspace(ctx, candidate, { allowMissing: true, forWrite: true }),
    )
      .then(() => true)
      .catch(() => false);
    if (!exists) return candidate;
  }
}
