import { gfm } from "@joplin/turndown-plugin-gfm";
import { isProbablyReaderable, Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { parse as parseHtml5, serialize } from "parse5";
import TurndownService from "turndown";

export interface PageLink {
  text: string;
  url: string;
}

/** An HTML page turned into text a model can read. */
export interface ReadablePage {
  title: string;
  /** The main content as Markdown, links inline with absolute URLs. */
  markdown: string;
  /** "article": Readability found the main content; "page": the page body minus navigation was converted. */
  extraction: "article" | "page";
  /** Every link kept in `markdown`, in order, without duplicates. */
  links: PageLink[];
  byline?: string;
  siteName?: string;
}

// Never content: removed before anything else looks at the page.
const NOISE = "script, style, noscript, template, svg, canvas, iframe, object, embed, link, meta";
// Page furniture, dropped when the whole body is converted (Readability drops it on its own).
const FURNITURE =
  "nav, header, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [role=search], [aria-hidden=true], [hidden], dialog";
const KEPT_SCHEMES = new Set(["http:", "https:", "mailto:"]);
// Below this many characters Readability's pick is not trusted over the whole page.
const MIN_ARTICLE_CHARS = 200;

// linkedom's node types are its own; this is the little of the DOM we touch.
interface Element {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
  querySelectorAll(selector: string): Iterable<Element>;
  querySelector(selector: string): Element | null;
  textContent: string | null;
  innerHTML: string;
}
interface Doc extends Element {
  title?: string;
  body: Element | null;
}

/**
 * Turn an HTML page into Markdown: Readability (Firefox Reader View) picks the main content
 * when the page looks like an article, otherwise the body minus navigation, headers and
 * footers is used; Turndown (with GitHub tables) writes the Markdown. Relative links and
 * images are made absolute against `pageUrl` (and `<base href>`); links to other schemes
 * (`javascript:`) keep only their text.
 */
export function htmlToReadable(source: string, pageUrl: string): ReadablePage {
  // linkedom's parser does not build the tree the way browsers do (a page without explicit
  // <body> tags comes out with an empty body): parse5, the HTML standard's algorithm, makes
  // every implied element explicit first.
  const html = serialize(parseHtml5(source));
  const document = parse(html);
  const page = new URL(pageUrl);
  const base = baseUrl(document, page);
  const pageTitle = titleOf(document);
  prepare(document, base);

  if (isProbablyReaderable(document as never)) {
    // Readability rewrites the document it is given, so the fallback below re-parses.
    const article = new Readability(document as never).parse();
    if (article?.content && (article.textContent ?? "").trim().length >= MIN_ARTICLE_CHARS) {
      const { markdown, links } = toMarkdown(article.content, page);
      return {
        title: (article.title ?? "").trim() || pageTitle,
        markdown,
        extraction: "article",
        links,
        ...(article.byline ? { byline: collapse(article.byline).replace(/^by\s+/i, "") } : {}),
        ...(article.siteName ? { siteName: article.siteName.trim() } : {}),
      };
    }
  }

  const whole = parse(html);
  prepare(whole, base);
  const main = whole.querySelector("main, [role=main]") ?? whole.querySelector("article");
  let root: Element | null = main;
  if (!root || (root.textContent ?? "").trim().length < MIN_ARTICLE_CHARS) {
    for (const el of [...whole.querySelectorAll(FURNITURE)]) el.remove();
    root = whole.body ?? whole;
    // A page that is nothing but navigation (a link index) keeps it rather than coming back empty.
    if ((root.textContent ?? "").trim() === "") {
      const again = parse(html);
      prepare(again, base);
      root = again.body ?? again;
    }
  }
  const { markdown, links } = toMarkdown(root.innerHTML, page);
  return { title: pageTitle, markdown, extraction: "page", links };
}

function parse(html: string): Doc {
  return parseHTML(html).document as unknown as Doc;
}

function baseUrl(document: Doc, page: URL): URL {
  const href = document.querySelector("base[href]")?.getAttribute("href");
  if (!href) return page;
  try {
    const base = new URL(href, page);
    return base.protocol === "http:" || base.protocol === "https:" ? base : page;
  } catch {
    return page;
  }
}

function titleOf(document: Doc): string {
  const fromTag = document.querySelector("title")?.textContent;
  const fromOg = document.querySelector('meta[property="og:title"]')?.getAttribute("content");
  const fromH1 = document.querySelector("h1")?.textContent;
  return collapse(fromTag || fromOg || fromH1 || "");
}

/** Remove scripts and styles; make link and image URLs absolute (or drop them). */
function prepare(document: Doc, base: URL): void {
  for (const el of [...document.querySelectorAll(NOISE)]) el.remove();
  for (const a of document.querySelectorAll("a[href]")) absolutize(a, "href", base);
  for (const img of document.querySelectorAll("img[src]")) absolutize(img, "src", base);
}

function absolutize(el: Element, attribute: string, base: URL): void {
  const raw = el.getAttribute(attribute) ?? "";
  try {
    const url = new URL(raw.trim(), base);
    if (KEPT_SCHEMES.has(url.protocol)) {
      el.setAttribute(attribute, url.href);
      return;
    }
  } catch {
    // not a URL: fall through and drop it
  }
  el.removeAttribute(attribute);
}

interface TurndownNode {
  getAttribute(name: string): string | null;
}

function toMarkdown(html: string, page: URL): { markdown: string; links: PageLink[] } {
  const links = new Map<string, PageLink>();
  const service = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "_",
  });
  service.use(gfm);
  service.addRule("link", {
    filter: (node) => node.nodeName === "A" && node.getAttribute("href") !== null,
    replacement: (content, node) => {
      const text = collapse(content);
      const href = (node as unknown as TurndownNode).getAttribute("href") ?? "";
      if (!text) return "";
      // A jump within the same page adds nothing a reader of the text needs.
      if (isSamePage(href, page)) return text;
      if (!links.has(href)) links.set(href, { text, url: href });
      return `[${text}](${href.replace(/[()\s]/g, encodeURIComponent)})`;
    },
  });
  service.addRule("image", {
    filter: "img",
    replacement: (_content, node) => {
      const el = node as unknown as TurndownNode;
      const alt = collapse(el.getAttribute("alt") ?? "");
      const src = el.getAttribute("src");
      if (!alt) return "";
      return src ? `![${alt.replace(/[[\]]/g, "")}](${src.replace(/[()\s]/g, encodeURIComponent)})` : alt;
    },
  });
  const markdown = service
    .turndown(html)
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { markdown, links: [...links.values()] };
}

function isSamePage(href: string, page: URL): boolean {
  try {
    const url = new URL(href);
    return (
      url.hash !== "" &&
      url.origin === page.origin &&
      url.pathname === page.pathname &&
      url.search === page.search
    );
  } catch {
    return false;
  }
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
