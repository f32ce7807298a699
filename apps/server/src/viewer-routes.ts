import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";

const FILES = [
  { url: "/", file: "index.html", type: "text/html; charset=utf-8" },
  { url: "/viewer.js", file: "viewer.js", type: "text/javascript; charset=utf-8" },
  { url: "/viewer.css", file: "viewer.css", type: "text/css; charset=utf-8" },
] as const;

/**
 * The page may talk only to this server and run only its own script: the token it holds
 * (from the URL fragment) cannot leak to another origin, and nothing injected could run.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Where the viewer's static files live: `viewer/` beside `src/` and `dist/`. */
export function viewerDir(): URL {
  return new URL("../viewer/", import.meta.url);
}

/**
 * GET /, /viewer.js, /viewer.css: the run viewer's static files, served without auth
 * (they hold no data; every data request the page makes carries the bearer token).
 * Read once at start-up.
 */
export function registerViewerRoutes(app: FastifyInstance): void {
  const dir = viewerDir();
  for (const entry of FILES) {
    const body = readFileSync(new URL(entry.file, dir));
    app.get(entry.url, { config: { public: true } }, async (_request, reply) =>
      reply
        .header("content-type", entry.type)
        .header("content-security-policy", CSP)
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer")
        .header("x-frame-options", "DENY")
        .header("cache-control", "no-store")
        .send(body),
    );
  }
}
