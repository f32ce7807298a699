import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { capability } from "@capgate/capability-browser-panel";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
} from "@capgate/tools";

// A local site with a search form; loopback is reachable only because allowHosts lists it.
const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  const q = (url.searchParams.get("q") ?? "").replace(/[<>&"]/g, "");
  res
    .writeHead(200, { "content-type": "text/html" })
    .end(
      url.pathname === "/results"
        ? `<title>Results</title><p>Found 3 pages about ${q}.</p>`
        : `<title>Search</title><form action="/results"><label for="q">Query</label><input id="q" name="q"><button>Go</button></form>`,
    );
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const workspace = mkdtempSync(join(tmpdir(), "panel-"));
// capgate's own files (browser profiles): a directory outside the workspace
const stateDir = mkdtempSync(join(tmpdir(), "panel-state-"));
const resources = createHostResources(); // the host owns the browser and closes it at shutdown
const ctx: ExecuteContext = {
  workspace,
  signal: new AbortController().signal,
  env: {},
  profile: { name: "Researcher", maySpawnWorkers: false },
  limits: DEFAULT_LIMITS,
  policy: { web: { allowHosts: [new URL(origin).host] } },
  services: { browserExecutable: "/usr/bin/chromium" },
  resources,
  stateDir,
  capabilities: new CapabilitySet([capability]),
  loaded: { isToolLoaded: () => true },
};

try {
  const opened = await executeTool("browser_panel.open", { url: origin }, ctx);
  console.log(opened.summary);
  // Opened http://127.0.0.1:…
  // Title: Search
  // …
  // Interactive elements (2); use a ref such as e1 as the target:
  // [e1] textbox "Query"
  // [e2] button "Go"

  const typed = await executeTool(
    "browser_panel.type",
    { target: "Query", text: "capgate", submit: true },
    ctx,
  );
  console.log(typed.summary); // Typed "capgate" into [e1] textbox "Query" and pressed Enter. … Found 3 pages about capgate.

  const shot = await executeTool("browser_panel.screenshot", { path: "results.png" }, ctx);
  console.log(shot.summary); // Saved a 1280×800 PNG screenshot of …/results?q=capgate to results.png (… bytes).
} finally {
  await resources.closeAll(); // closes Chromium and its temporary profile
  server.close();
}
