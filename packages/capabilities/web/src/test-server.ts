// A real HTTP server on 127.0.0.1 for the tests (not part of the package's build).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

export interface TestServer {
  url: string;
  port: number;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  /** Bytes the /big route managed to write before the client stopped reading. */
  bigBytesSent: () => number;
  close: () => Promise<void>;
}

export const ARTICLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Gatekeeping Tools for Agents</title>
<style>body { color: red }</style><script>window.tracker = 1;</script></head>
<body>
<header><nav><a href="/">Home</a> | <a href="/blog">Blog</a> | <a href="/about">About us</a></nav></header>
<main><article>
<h1>Gatekeeping Tools for Agents</h1>
<p class="byline">By Ada Example</p>
<p>An agent that can reach every tool at once is hard to steer. A capability gate shows the model
eight tools and lets it search for the rest, loading a capability only when the task needs it.
This keeps the context small and every call checked against a closed schema.</p>
<p>Read the <a href="/docs/protocol">protocol notes</a> and the
<a href="https://example.org/spec?x=1">external specification</a> before writing a capability.
Jump to <a href="#limits">the limits</a>.</p>
<h2 id="limits">Limits that hold</h2>
<p>Every network call passes a guard: only http and https, no private or loopback addresses, and the
check runs again on every redirect. Sizes and times are capped so that a slow or huge page cannot
stall the loop. Policies are enforced by code, never merely described.</p>
<table><thead><tr><th>Limit</th><th>Default</th></tr></thead>
<tbody><tr><td>fetch bytes</td><td>2 MiB</td></tr><tr><td>timeout</td><td>30 s</td></tr></tbody></table>
<p>With these rules in place, the same loop can run a coder, a researcher or a verifier, each with
the tools its profile allows, and every refusal explains what to send instead.</p>
<p><a href="javascript:alert(1)">Click me</a> is not a real link.</p>
</article></main>
<footer><p>Copyright footer text</p><a href="/privacy">Privacy</a></footer>
</body></html>`;

// A PNG signature and IHDR chunk for a 640×480 image: enough for sniffing, with NUL bytes.
export const PNG_BYTES = Buffer.from(
  `89504e470d0a1a0a0000000d4948445200000280000001e00806000000${"00".repeat(64)}`,
  "hex",
);

export const BIG_BYTES = 20 * 1024 * 1024;

export async function startTestServer(): Promise<TestServer> {
  const hits = new Map<string, number>();
  let bigSent = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    route(url, req, res, (n) => {
      bigSent = n;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    bigBytesSent: () => bigSent,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Each case returns what it sends, to end the switch.
function route(url: URL, req: IncomingMessage, res: ServerResponse, onBig: (sent: number) => void) {
  const send = (
    status: number,
    type: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { "content-type": type, ...headers });
    res.end(body);
  };
  switch (url.pathname) {
    case "/article":
      return send(200, "text/html; charset=utf-8", ARTICLE_HTML);
    case "/latin1":
      return send(
        200,
        "text/html; charset=iso-8859-1",
        Buffer.from(
          "<html><head><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>",
          "latin1",
        ),
      );
    case "/data.json":
      return send(
        200,
        "application/json",
        JSON.stringify({ name: "capgate", tools: ["fetch", "request"], n: 2 }),
      );
    case "/gzip.json": {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      return void res.end(gzipSync(JSON.stringify({ compressed: true })));
    }
    case "/plain.txt":
      return send(200, "text/plain; charset=utf-8", "line one\n  line two with *stars* and <tags>\n");
    case "/image.png":
      return send(200, "image/png", PNG_BYTES);
    case "/mystery":
      return send(200, "application/octet-stream", Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]));
    case "/missing":
      return send(
        404,
        "text/html",
        "<html><head><title>Not Found</title></head><body><p>No page here.</p></body></html>",
      );
    case "/big":
      return streamBig(res, onBig);
    case "/slow":
      return; // never answers
    case "/drip": {
      res.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => res.write("."), 100);
      res.on("close", () => clearInterval(timer));
      return;
    }
    case "/redirect": {
      const to = url.searchParams.get("to") ?? "/article";
      const status = Number(url.searchParams.get("status") ?? 302);
      res.writeHead(status, { location: to });
      return void res.end();
    }
    case "/loop":
      res.writeHead(302, { location: "/loop" });
      return void res.end();
    case "/echo":
      return echo(url, req, res);
    default:
      return send(404, "text/plain", `no route ${url.pathname}`);
  }
}

function streamBig(res: ServerResponse, onSent: (n: number) => void): void {
  res.writeHead(200, { "content-type": "text/plain", "content-length": String(BIG_BYTES) });
  const chunk = Buffer.alloc(64 * 1024, "a");
  let sent = 0;
  const pump = () => {
    while (sent < BIG_BYTES && !res.destroyed) {
      sent += chunk.length;
      onSent(sent);
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

function echo(url: URL, req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const status = Number(url.searchParams.get("status") ?? 200);
    const body = JSON.stringify({
      method: req.method,
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    });
    res.writeHead(status, {
      "content-type": "application/json",
      "x-ratelimit-remaining": "41",
      "x-internal-noise": "not shown",
      "set-cookie": [
        "session=secret-token; Path=/; HttpOnly",
        "theme=dark; Expires=Wed, 21 Oct 2037 07:28:00 GMT",
      ],
    });
    res.end(req.method === "HEAD" ? undefined : body);
  });
}
