import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpClientError } from "../errors.js";
import type { InteractiveAuthorization } from "../oauth/oauth-provider.js";

export interface LoopbackRedirectOptions {
  /** Port on 127.0.0.1 (default 0: a free one). A pre-registered client's registered redirect URI fixes it. */
  port?: number;
  /** Shows the authorization URL (the CLI prints it; it never launches a browser). */
  onAuthorizationUrl(url: URL, server: string): void | Promise<void>;
  /** How long to wait for the redirect (default 5 minutes). */
  timeoutMs?: number;
}

export interface LoopbackRedirect extends InteractiveAuthorization {
  readonly port: number;
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text}</p>`;

interface Arrival {
  code?: string;
  error?: string;
}

/**
 * The redirect end of an authorization-code login: an HTTP listener on 127.0.0.1 only, at
 * the exact path `/callback`. It answers only a redirect whose `state` matches a login it
 * handed out, keeps the code in memory for the waiting login, and never logs it.
 */
export async function startLoopbackRedirect(options: LoopbackRedirectOptions): Promise<LoopbackRedirect> {
  const arrivals = new Map<string, Arrival>();
  const waiters = new Map<string, (arrival: Arrival) => void>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== "/callback") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const state = url.searchParams.get("state") ?? "";
    const code = url.searchParams.get("code");
    const error = url.searchParams.get("error");
    if (!state || (!code && !error)) {
      res
        .writeHead(400, { "content-type": "text/html" })
        .end(PAGE("Login failed", "This redirect carries no code."));
      return;
    }
    const arrival: Arrival = code
      ? { code }
      : {
          error: `${error}${url.searchParams.get("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`,
        };
    const waiter = waiters.get(state);
    if (waiter) {
      waiters.delete(state);
      waiter(arrival);
    } else arrivals.set(state, arrival);
    res
      .writeHead(code ? 200 : 400, { "content-type": "text/html", "cache-control": "no-store" })
      .end(
        code
          ? PAGE("Logged in", "capgate received the authorization. You can close this tab.")
          : PAGE("Login refused", "The authorization server refused the login; see the terminal."),
      );
  };
  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new McpClientError(
          "mcp_auth_failed",
          `Cannot listen for the login redirect on 127.0.0.1:${options.port ?? 0}: ${error.code ?? error.message}${error.code === "EADDRINUSE" ? " (another program uses that port; change oauth.redirectPort)" : ""}.`,
        ),
      ),
    );
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const timeoutMs = options.timeoutMs ?? 300_000;
  return {
    port,
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    onAuthorizationUrl: options.onAuthorizationUrl,
    waitForCode(state, signal) {
      return new Promise<string>((resolve, reject) => {
        const settle = (arrival: Arrival) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          if (arrival.code) resolve(arrival.code);
          else
            reject(
              new McpClientError(
                "mcp_auth_failed",
                `The authorization server refused the login (${arrival.error ?? "no code"}).`,
              ),
            );
        };
        const onAbort = () => {
          waiters.delete(state);
          clearTimeout(timer);
          reject(new McpClientError("mcp_aborted", "The login was cancelled before the redirect arrived."));
        };
        const timer = setTimeout(() => {
          waiters.delete(state);
          signal?.removeEventListener("abort", onAbort);
          reject(
            new McpClientError(
              "mcp_auth_failed",
              `No login redirect arrived within ${Math.round(timeoutMs / 1000)} s; run the login again.`,
            ),
          );
        }, timeoutMs);
        signal?.addEventListener("abort", onAbort, { once: true });
        const early = arrivals.get(state);
        if (early) {
          arrivals.delete(state);
          settle(early);
        } else waiters.set(state, settle);
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
