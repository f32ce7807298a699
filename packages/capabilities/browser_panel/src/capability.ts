import { urlPolicy } from "@capgate/net-guard";
import { defineCapability } from "@capgate/tools";
import { workspacePathPolicy } from "@capgate/workspace";
import { manifest } from "./manifest.js";
import { back, click, close, open, screenshot, snapshot, type } from "./tools.js";

/**
 * browser_panel.*: a real headless Chromium. `open` checks its URL with the network guard
 * before anything launches (a refused URL is a rejection); every connection the page then
 * makes goes through the guard proxy. Screenshots stay inside the workspace.
 */
export const capability = defineCapability({
  manifest,
  handlers: { open, snapshot, click, type, screenshot, back, close },
  policies: {
    open: urlPolicy("url"),
    screenshot: workspacePathPolicy("path", { forWrite: true }),
  },
});
