import { readFile, stat } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, relative, resolve } from "node:path";

export interface StaticServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  /** `127.0.0.1:PORT`, for the config's web.allowHosts. */
  host: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".json": "application/json",
  ".css": "text/css",
  ".js": "text/javascript",
  ".csv": "text/csv; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/**
 * A task's web pages, served read-only from `dir` on 127.0.0.1 (a free port) for the
 * length of one run. `/` serves index.html; nothing outside `dir` is reachable.
 */
export async function startStaticServer(dir: string): Promise<StaticServer> {
  const root = resolve(dir);
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
        return;
      }
      let path: string;
      try {
        path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
      } catch {
        res.writeHead(400).end("bad path");
        return;
      }
      let file = resolve(root, `.${path}`);
      const rel = relative(root, file);
      if (rel.startsWith("..") || rel.includes("\0")) {
        res.writeHead(404).end("not found");
        return;
      }
      try {
        if ((await stat(file)).isDirectory()) file = join(file, "index.html");
        const body = await readFile(file);
        res.writeHead(200, {
          "content-type": TYPES[extname(file).toLowerCase()] ?? "application/octet-stream",
          "content-length": body.length,
        });
        res.end(req.method === "HEAD" ? undefined : body);
      } catch {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      }
    })();
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", done);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
