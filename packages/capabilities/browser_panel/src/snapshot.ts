import type { Page } from "playwright-core";
import type { GuardEvent } from "./guard-proxy.js";
import { type PageRequest, pageScript } from "./page-script.js";
import type { SessionEvents } from "./session.js";
import type { PageElement, PageSnapshot, TargetMatch } from "./snapshot-types.js";

export interface SnapshotSize {
  maxText: number;
  maxElements: number;
}

/** After open, click, type and back: enough to see what happened and act again. */
export const SHORT_SNAPSHOT: SnapshotSize = { maxText: 1_500, maxElements: 40 };
/** browser_panel.snapshot: the page in full, up to the output limit. */
export const FULL_SNAPSHOT: SnapshotSize = { maxText: 12_000, maxElements: 300 };

export async function takeSnapshot(page: Page, size: SnapshotSize): Promise<PageSnapshot> {
  return (await runPageScript(page, { op: "snapshot", ...size })) as PageSnapshot;
}

const NAVIGATED = /Execution context was destroyed|Cannot find context|frame was detached/i;
// Sent as source text with a no-op `__name`: transpilers that keep function names (tsx,
// esbuild's keepNames) insert `__name(...)` calls that do not exist inside the page.
const PAGE_SCRIPT = String(pageScript);

/**
 * Run the page script; when a navigation replaces the document under it (a script or a
 * meta refresh moving on), wait for the new document and run it there instead.
 */
export async function runPageScript(page: Page, request: PageRequest): Promise<PageSnapshot | TargetMatch> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await page.evaluate(
        `(() => { const __name = (fn) => fn; return (${PAGE_SCRIPT})(${JSON.stringify(request)}); })()`,
      )) as PageSnapshot | TargetMatch;
    } catch (error) {
      if (attempt >= 3 || !NAVIGATED.test((error as Error).message)) throw error;
      await page.waitForLoadState("domcontentloaded", { timeout: 5_000 }).catch(() => undefined);
    }
  }
}

/**
 * The snapshot as the model reads it: title and URL, the visible text, then one line per
 * interactive element with its ref — `[e3] link "About us" → /about`.
 */
export function formatSnapshot(snapshot: PageSnapshot, size: SnapshotSize): string {
  const lines = [`Title: ${snapshot.title || "(none)"}`, `URL: ${snapshot.url}`, ""];
  const more = size === FULL_SNAPSHOT ? "" : "; browser_panel.snapshot shows more";
  if (snapshot.textLength === 0) {
    lines.push("Text: (the page shows no text)");
  } else if (snapshot.text.length < snapshot.textLength) {
    lines.push(
      `Text (first ${snapshot.text.length.toLocaleString("en-US")} of ${snapshot.textLength.toLocaleString("en-US")} characters${more}):`,
      `${snapshot.text}…`,
    );
  } else {
    lines.push("Text:", snapshot.text);
  }
  lines.push("");
  if (snapshot.elementCount === 0) {
    lines.push("Interactive elements: none.");
  } else {
    const count =
      snapshot.elements.length < snapshot.elementCount
        ? `${snapshot.elements.length} of ${snapshot.elementCount}${more}`
        : String(snapshot.elementCount);
    lines.push(
      `Interactive elements (${count}); use a ref such as ${snapshot.elements[0]?.ref} as the target:`,
    );
    for (const element of snapshot.elements) lines.push(formatElement(element, snapshot.url));
  }
  return lines.join("\n");
}

export function formatElement(e: PageElement, pageUrl?: string): string {
  let line = `[${e.ref}] ${e.role}${e.name ? ` ${JSON.stringify(e.name)}` : ""}`;
  const details: string[] = [];
  if (e.type && e.role === "textbox" && e.type !== "text") details.push(e.type);
  if (e.placeholder && e.placeholder !== e.name) details.push(`placeholder ${JSON.stringify(e.placeholder)}`);
  if (e.options !== undefined) details.push(`${e.options} option${e.options === 1 ? "" : "s"}`);
  if (details.length > 0) line += ` (${details.join(", ")})`;
  if (e.value !== undefined) line += ` = ${JSON.stringify(e.value)}`;
  if (e.href) line += ` → ${shortHref(e.href, pageUrl)}`;
  if (e.checked) line += " [checked]";
  if (e.disabled) line += " [disabled]";
  return line;
}

/** Things the model should know that the snapshot does not show: refused requests, dialogs, new tabs. */
export function formatEvents(events: SessionEvents): string {
  const lines: string[] = [];
  // One line per host and outcome: a blocked host usually shows up with its favicon and more.
  const byHost = new Map<string, { event: GuardEvent; more: number }>();
  for (const e of events.network) {
    const key = `${e.kind} ${hostKey(e.url)}`;
    const seen = byHost.get(key);
    if (seen) seen.more++;
    else byHost.set(key, { event: e, more: 0 });
  }
  for (const { event: e, more } of byHost.values()) {
    const also = more > 0 ? ` (and ${more} more request${more === 1 ? "" : "s"} to that host)` : "";
    lines.push(
      e.kind === "blocked"
        ? `Blocked by the network guard: ${e.url}${also} — ${e.reason}`
        : `Could not load ${e.url}${also}: ${e.reason}`,
    );
  }
  for (const d of events.dialogs) lines.push(`Dialog ${d} (answered automatically)`);
  for (const p of events.popups)
    lines.push(`Opened a new tab${p && p !== "about:blank" ? ` (${p})` : ""}; it is now the active page.`);
  return lines.slice(0, 10).join("\n") + (lines.length > 10 ? `\n… and ${lines.length - 10} more` : "");
}

function shortHref(href: string, pageUrl: string | undefined): string {
  let shown = href;
  try {
    const url = new URL(href);
    if (pageUrl && url.origin === new URL(pageUrl).origin) shown = `${url.pathname}${url.search}${url.hash}`;
  } catch {
    // not a URL: show it as it is
  }
  return shown.length > 100 ? `${shown.slice(0, 99)}…` : shown;
}

function hostKey(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
