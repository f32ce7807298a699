import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { capability } from "@capgate/capability-web";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
} from "@capgate/tools";

// A local site to read: loopback is blocked unless the host allows it explicitly.
const server = createServer((req, res) => {
  if (req.url === "/api/items" && req.method === "POST") {
    res.writeHead(201, { "content-type": "application/json" }).end('{"id":7}');
    return;
  }
  res.writeHead(200, { "content-type": "text/html" }).end(
    `<html><head><title>Release notes</title></head><body><nav><a href="/">Home</a></nav>
     <article><h1>Release notes</h1><p>${"The gate keeps the model's tool list short. ".repeat(8)}</p>
     <p>See the <a href="/docs">documentation</a>.</p></article></body></html>`,
  );
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const ctx: ExecuteContext = {
  workspace: tmpdir(),
  signal: new AbortController().signal,
  env: {},
  profile: { name: "Researcher", maySpawnWorkers: false },
  limits: DEFAULT_LIMITS,
  policy: { web: { allowHosts: [new URL(origin).host] } },
  services: {},
  resources: createHostResources(),
  stateDir: tmpdir(),
  capabilities: new CapabilitySet([capability]),
  loaded: { isToolLoaded: () => true },
};

const page = await executeTool("web.fetch", { url: `${origin}/notes` }, ctx);
console.log(page.summary);
// 200 OK · http://127.0.0.1:…/notes · text/html · 512 bytes
// Title: Release notes
//
// The gate keeps the model's tool list short. …
// See the [documentation](http://127.0.0.1:…/docs).

const created = await executeTool(
  "web.request",
  { method: "POST", url: `${origin}/api/items`, body: '{"name":"x"}' },
  ctx,
);
console.log(created.success, created.summary.split("\n")[0]); // true POST http://127.0.0.1:…/api/items → 201 Created · 8 bytes

// Private addresses are refused before anything is sent (a policy_denied rejection).
await executeTool("web.fetch", { url: "http://169.254.169.254/latest/meta-data/" }, ctx).catch(
  (error: Error) => console.log(error.message),
);
server.close();
