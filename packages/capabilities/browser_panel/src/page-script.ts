/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// This function runs inside the page (Playwright serialises it with toString), so it may
// use nothing from this module's scope: every helper is declared inside it.
import type { PageElement, PageSnapshot, TargetMatch, TargetStage } from "./snapshot-types.js";

export type PageRequest =
  | { op: "snapshot"; maxText: number; maxElements: number }
  | { op: "resolve"; target: string; mode: "click" | "type"; maxCandidates: number };

/**
 * In the page: list the visible text and the interactive elements (marking each with a
 * `data-capgate-ref` attribute that stays put for the life of the document), or find the
 * element a `target` names. Target stages, first match wins: ref (`e12`), exact name
 * (text, label, placeholder, aria-label, title), CSS selector, partial name, and for
 * click the exact visible text of any element. More than one match at a stage is ambiguous.
 */
export function pageScript(request: PageRequest): PageSnapshot | TargetMatch {
  const ATTR = "data-capgate-ref";
  const SEQ = "data-capgate-seq";
  const INTERACTIVE = [
    "a[href]",
    "button",
    "input:not([type=hidden])",
    "select",
    "textarea",
    "summary",
    "[contenteditable='']",
    "[contenteditable=true]",
    "[onclick]",
    ...[
      "button",
      "link",
      "checkbox",
      "radio",
      "switch",
      "tab",
      "menuitem",
      "option",
      "combobox",
      "textbox",
      "searchbox",
      "slider",
    ].map((r) => `[role=${r}]`),
  ].join(",");
  const NOT_TYPABLE = new Set([
    "checkbox",
    "radio",
    "submit",
    "button",
    "reset",
    "image",
    "file",
    "range",
    "color",
  ]);

  const collapse = (s: string | null | undefined): string => (s ?? "").replace(/\s+/g, " ").trim();
  const norm = (s: string | null | undefined): string => collapse(s).toLowerCase();
  const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

  const isVisible = (el: Element): boolean => {
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 && rect.height === 0) return false;
    return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
  };

  const refOf = (el: Element): string => {
    const existing = el.getAttribute(ATTR);
    if (existing) return existing;
    const root = document.documentElement;
    const next = Number(root.getAttribute(SEQ) ?? "0") + 1;
    root.setAttribute(SEQ, String(next));
    const ref = `e${next}`;
    el.setAttribute(ATTR, ref);
    return ref;
  };

  const roleOf = (el: Element): string => {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.trim().split(/\s+/)[0] ?? explicit;
    const tag = el.tagName.toLowerCase();
    if (tag === "a") return "link";
    if (tag === "button" || tag === "summary") return "button";
    if (el instanceof HTMLSelectElement) return el.multiple ? "listbox" : "combobox";
    if (tag === "textarea") return "textbox";
    if (el instanceof HTMLInputElement) {
      const type = el.type;
      if (type === "checkbox" || type === "radio") return type;
      if (type === "submit" || type === "button" || type === "reset" || type === "image") return "button";
      if (type === "range") return "slider";
      if (type === "search") return "searchbox";
      if (type === "file") return "file chooser";
      return "textbox";
    }
    if (el instanceof HTMLElement && el.isContentEditable) return "textbox";
    return "clickable";
  };

  const nameOf = (el: Element): string => {
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = collapse(
        labelledBy
          .split(/\s+/)
          .map((id) => document.getElementById(id)?.textContent ?? "")
          .join(" "),
      );
      if (text) return text;
    }
    const aria = collapse(el.getAttribute("aria-label"));
    if (aria) return aria;
    if (el instanceof HTMLInputElement && ["submit", "button", "reset"].includes(el.type)) {
      return collapse(el.value) || (el.type === "submit" ? "Submit" : el.type === "reset" ? "Reset" : "");
    }
    if (el instanceof HTMLInputElement && el.type === "image") return collapse(el.alt) || "Submit";
    if (
      el instanceof HTMLInputElement ||
      el instanceof HTMLSelectElement ||
      el instanceof HTMLTextAreaElement
    ) {
      // A label wrapping its control would otherwise include the control's own text (a select's options).
      const labelText = (label: HTMLLabelElement): string => {
        const copy = label.cloneNode(true) as HTMLElement;
        for (const inner of copy.querySelectorAll("select, textarea, input, button")) inner.remove();
        return collapse(copy.textContent);
      };
      const labels = [...(el.labels ?? [])].map(labelText).filter(Boolean);
      if (labels.length > 0) return labels.join(" ");
      return collapse(el.getAttribute("placeholder")) || collapse(el.getAttribute("title"));
    }
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text (hidden parts left out) is the point.
    const text = el instanceof HTMLElement ? collapse(el.innerText) : collapse(el.textContent);
    if (text) return text;
    const img = el.querySelector("img[alt]");
    return collapse(img?.getAttribute("alt")) || collapse(el.getAttribute("title"));
  };

  const isTypable = (el: Element): boolean => {
    if (el instanceof HTMLInputElement) return !NOT_TYPABLE.has(el.type);
    if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true;
    if (el instanceof HTMLElement && el.isContentEditable) return true;
    const role = el.getAttribute("role");
    return role === "textbox" || role === "searchbox" || role === "combobox";
  };

  const describe = (el: Element): PageElement => {
    const info: PageElement = {
      ref: refOf(el),
      role: roleOf(el),
      name: cut(nameOf(el), 100),
      tag: el.tagName.toLowerCase(),
    };
    if (el instanceof HTMLInputElement) {
      info.type = el.type;
      if (el.placeholder) info.placeholder = cut(el.placeholder, 80);
      if (el.type === "checkbox" || el.type === "radio") info.checked = el.checked;
      else if (isTypable(el) && el.value) info.value = el.type === "password" ? "•••" : cut(el.value, 80);
    } else if (el instanceof HTMLTextAreaElement) {
      if (el.placeholder) info.placeholder = cut(el.placeholder, 80);
      if (el.value) info.value = cut(el.value, 80);
    } else if (el instanceof HTMLSelectElement) {
      info.options = el.options.length;
      const chosen = [...el.selectedOptions].map((o) => collapse(o.text)).join(", ");
      if (chosen) info.value = cut(chosen, 80);
    } else if (el instanceof HTMLAnchorElement) {
      info.href = el.href;
    }
    const ariaChecked = el.getAttribute("aria-checked");
    if (ariaChecked && info.checked === undefined) info.checked = ariaChecked === "true";
    if ((el as HTMLButtonElement).disabled === true || el.getAttribute("aria-disabled") === "true")
      info.disabled = true;
    return info;
  };

  const interactive = (): Element[] => [...document.querySelectorAll(INTERACTIVE)].filter(isVisible);

  if (request.op === "snapshot") {
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text (hidden parts left out) is the point.
    const raw = document.body?.innerText ?? "";
    const text = raw
      .split("\n")
      .map((line) => line.replace(/[ \t\u00a0]+/g, " ").trim())
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
    const all = interactive();
    return {
      title: document.title,
      url: location.href,
      text: text.slice(0, request.maxText),
      textLength: text.length,
      elements: all.slice(0, request.maxElements).map(describe),
      elementCount: all.length,
    };
  }

  const target = request.target.trim();
  const want = norm(target);
  const decide = (matches: Element[], how: TargetStage): TargetMatch =>
    matches.length === 1
      ? { found: describe(matches[0]!), how }
      : { ambiguous: matches.slice(0, request.maxCandidates).map(describe), how };

  const ref = /^\[?(e\d+)\]?$/i.exec(target)?.[1];
  if (ref) {
    const el = document.querySelector(`[${ATTR}="${ref.toLowerCase()}"]`);
    return el ? { found: describe(el), how: "ref" } : { none: true, staleRef: true, suggestions: [] };
  }

  let pool = interactive();
  if (request.mode === "type") pool = pool.filter(isTypable);
  const namesOf = (el: Element): string[] =>
    [nameOf(el), el.getAttribute("placeholder"), el.getAttribute("aria-label"), el.getAttribute("title")]
      .map(norm)
      .filter(Boolean);

  const exact = pool.filter((el) => namesOf(el).includes(want));
  if (exact.length > 0) return decide(exact, "exact name");

  let css: Element[] = [];
  try {
    css = [...document.querySelectorAll(target)];
  } catch {
    // not a CSS selector: the other stages decide
  }
  if (css.length > 0) {
    const visible = css.filter(isVisible);
    if (visible.length > 0) css = visible;
    if (request.mode === "type") {
      const typable = css.filter(isTypable);
      if (typable.length > 0) css = typable;
    }
    return decide(css, "css selector");
  }

  const partial = pool.filter((el) => namesOf(el).some((n) => n.includes(want)));
  if (partial.length > 0) return decide(partial, "partial name");

  if (request.mode === "click" && want) {
    const holders = [...document.body.querySelectorAll("*")].filter(
      (el) =>
        el instanceof HTMLElement &&
        norm(el.textContent).includes(want) &&
        // biome-ignore lint/performance/useDomNodeTextContent: matches what is shown, as the snapshot does.
        norm(el.innerText) === want &&
        isVisible(el),
    );
    // The innermost element carrying the text, not every ancestor around it.
    const innermost = holders.filter((el) => !holders.some((other) => other !== el && el.contains(other)));
    if (innermost.length > 0) return decide(innermost, "exact text");
  }

  return { none: true, suggestions: pool.slice(0, request.maxCandidates).map(describe) };
}
