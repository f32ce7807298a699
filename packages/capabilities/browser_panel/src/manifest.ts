import type { ManifestLike } from "@capgate/tools";

const target = {
  type: "string",
  minLength: 1,
  maxLength: 1000,
  description:
    "Element ref from the latest snapshot (e.g. 'e12'), its visible text, a field's label or placeholder, or a CSS selector.",
} as const;

// Only .png inside the workspace: a screenshot must never overwrite source files.
const screenshotPath = {
  type: "string",
  minLength: 5,
  maxLength: 4096,
  pattern: "\\.png$",
  description: "Where to save the PNG, relative to the workspace root, ending in .png (default: a new file).",
} as const;

/**
 * The browser panel: one real headless Chromium page per host, kept open between calls.
 * browser_panel.open is the only sanctioned way to open a page; the shell policy denies
 * GUI openers and its denial message points here.
 */
export const manifest = {
  name: "browser_panel",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "A real headless Chromium browser for web pages rendered by JavaScript (single-page apps, content loaded by scripts) and for using a site: open a page, read it, click links and buttons, fill in and submit forms, capture the page as an image. Use web.fetch for the plain text of a static page.",
  profileFit: ["Researcher", "ComputerOperator"],
  tools: [
    {
      name: "browser_panel.open",
      description:
        "Open a web page in the browser panel and return its title, URL and a text snapshot listing interactive elements with refs for click and type. Never use shell.run with open, /usr/bin/open, xdg-open, Chrome, Safari or Firefox to open pages: those are denied.",
      risk: "network",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          url: {
            type: "string",
            minLength: 1,
            maxLength: 8192,
            pattern: "^https?://",
            format: "uri",
            description: "Absolute http:// or https:// URL.",
          },
        },
        required: ["url"],
      },
    },
    {
      name: "browser_panel.snapshot",
      description:
        "Return a text snapshot of the open page: title, URL, visible text and interactive elements with their refs. Take a fresh one after the page changes.",
      risk: "network",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
    {
      name: "browser_panel.click",
      description: "Click a link, button or other element of the open page and return the updated snapshot.",
      risk: "network",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { target },
        required: ["target"],
      },
    },
    {
      name: "browser_panel.type",
      description:
        "Type text into an input field of the open page, replacing what it holds; `submit` presses Enter afterwards. Returns the updated snapshot.",
      risk: "network",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          target,
          text: {
            type: "string",
            maxLength: 100000,
            description: "Text to enter (may be empty to clear the field).",
          },
          submit: {
            type: "boolean",
            description: "Press Enter after typing, e.g. to send a search (default false).",
          },
        },
        required: ["target", "text"],
      },
    },
    {
      name: "browser_panel.screenshot",
      description: "Save a PNG screenshot of the open page's viewport and return the file path.",
      risk: "network",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: screenshotPath },
      },
    },
    {
      name: "browser_panel.back",
      description: "Go back to the previous page in the browser history and return its snapshot.",
      risk: "network",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
    {
      name: "browser_panel.close",
      description:
        "Close the browser and free its memory; the next browser_panel.open starts a fresh one without cookies.",
      risk: "network",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
  ],
} as const satisfies ManifestLike;
