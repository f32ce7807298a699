import type { Frame, Locator, Page, Request } from "playwright-core";
import type { PageRequest } from "./page-script.js";
import { formatElement, runPageScript } from "./snapshot.js";
import type { PageElement, TargetMatch, TargetStage } from "./snapshot-types.js";

const STAGES: TargetStage[] = ["ref", "exact name", "css selector", "partial name", "exact text"];
const MAX_CANDIDATES = 15;
// Time for a navigation the action caused (a link, a form submit, a script) to start.
const NAVIGATION_GRACE_MS = 150;
// Bounded waits after an action: the page's load event, then a quiet network.
const LOAD_WAIT_MS = 5_000;
const IDLE_WAIT_MS = 1_500;

export type ResolvedTarget =
  | { locator: Locator; element: PageElement; how: TargetStage }
  | { failure: string };

/**
 * Find the one element `target` names, trying in order: a ref from a snapshot (`e12` or
 * `[e12]`), an exact accessible name (visible text, label, placeholder, aria-label, title;
 * case and spacing ignored), a CSS selector, a partial name, and — for click — the exact
 * visible text of any element. For `type` only fields that take text are considered by
 * name. None or several → a failure listing the candidates with their refs.
 */
export async function resolveTarget(
  page: Page,
  target: string,
  mode: "click" | "type",
): Promise<ResolvedTarget> {
  const request: PageRequest = { op: "resolve", target, mode, maxCandidates: MAX_CANDIDATES };
  const match = (await runPageScript(page, request)) as TargetMatch;
  if ("found" in match) {
    return {
      locator: page.locator(`[data-capgate-ref="${match.found.ref}"]`),
      element: match.found,
      how: match.how,
    };
  }
  if ("ambiguous" in match) {
    return {
      failure: `Target ${JSON.stringify(target)} is ambiguous: ${match.ambiguous.length >= MAX_CANDIDATES ? `${MAX_CANDIDATES} or more` : match.ambiguous.length} elements match by ${match.how}. Use the ref of the one you mean:\n${match.ambiguous.map((e) => formatElement(e, page.url())).join("\n")}`,
    };
  }
  if (match.staleRef) {
    return {
      failure: `No element has ref ${JSON.stringify(target)} on the current page (refs belong to one page load, and the page has changed since). Take a new browser_panel.snapshot and use a ref from it.`,
    };
  }
  const what = mode === "type" ? "field that takes text" : "element";
  const list =
    match.suggestions.length > 0
      ? `\n${mode === "type" ? "Fields" : "Interactive elements"} on the page:\n${match.suggestions.map((e) => formatElement(e, page.url())).join("\n")}`
      : mode === "type"
        ? " The page has no visible field that takes text."
        : "";
  return {
    failure: `No ${what} matches target ${JSON.stringify(target)} (tried ${STAGES.join(", ")}).${list}`,
  };
}

/**
 * Run an action that may navigate, then wait until the page has settled: the navigation
 * it started (if any) has committed or failed, the load event has fired, and the network
 * has been quiet briefly. The waits are bounded; a page that never goes quiet is shown as it is.
 */
export async function settleAfter(
  page: Page,
  action: () => Promise<unknown>,
  timeoutMs: number,
): Promise<void> {
  let navigation: Request | undefined;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const onRequest = (request: Request) => {
    if (!navigation && request.isNavigationRequest() && request.frame() === page.mainFrame())
      navigation = request;
  };
  const onNavigated = (frame: Frame) => {
    if (frame === page.mainFrame()) finish();
  };
  const onFailed = (request: Request) => {
    if (request === navigation) finish();
  };
  page.on("request", onRequest);
  page.on("framenavigated", onNavigated);
  page.on("requestfailed", onFailed);
  try {
    await action();
    await page.waitForTimeout(NAVIGATION_GRACE_MS);
    if (navigation) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        finished,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    }
  } finally {
    page.off("request", onRequest);
    page.off("framenavigated", onNavigated);
    page.off("requestfailed", onFailed);
  }
  await waitForQuiet(page);
}

/** The load event and a quiet network, each waited for a bounded time. */
export async function waitForQuiet(page: Page): Promise<void> {
  await page.waitForLoadState("load", { timeout: LOAD_WAIT_MS }).catch(() => undefined);
  await page.waitForLoadState("networkidle", { timeout: IDLE_WAIT_MS }).catch(() => undefined);
}

/** The first line of a Playwright error, without its call log. */
export function shortError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n")[0] ?? message).replace(/^(locator|page|elementHandle)\.\w+: /, "");
}
