import { randomUUID } from "node:crypto";
import type { Harness } from "@capgate/harness";
import {
  describeAuth,
  type ElicitationField,
  type ElicitationHandler,
  elicitationFields,
  isHttpServer,
  type McpAuthStatus,
  type McpServerConfig,
} from "@capgate/mcp-client";
import { fileAuthStore, loginMcpServer } from "@capgate/mcp-client/stdio";
import { CapgateError } from "@capgate/schema";

/** An MCP server's form request waiting for the operator, as GET /elicitations shows it. */
export interface PendingElicitation {
  elicitationId: string;
  server: string;
  message: string;
  fields: ElicitationField[];
  requestedAt: string;
}

export type ElicitationAnswer =
  | { action: "accept"; content: Record<string, string | number | boolean | string[]> }
  | { action: "decline" | "cancel" };

interface ElicitationWaiter {
  info: PendingElicitation;
  settle: (answer: ElicitationAnswer) => void;
}

/**
 * Where MCP servers' elicitations wait for the operator, the way approvals do:
 * GET /elicitations lists them, POST /elicitations/:id answers (accept with content,
 * decline, cancel). Nobody answering within the timeout, the call being aborted, or
 * shutdown declines. Accepted content is checked against the form before it is sent.
 */
export class ElicitationRegistry {
  readonly #pending = new Map<string, ElicitationWaiter>();
  readonly #timeoutMs: number;

  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 15 * 60_000;
  }

  readonly hook: ElicitationHandler = ({ server, params, signal }) =>
    new Promise((resolve) => {
      const info: PendingElicitation = {
        elicitationId: randomUUID(),
        server,
        message: params.message,
        fields: elicitationFields(params),
        requestedAt: new Date().toISOString(),
      };
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => settle({ action: "cancel" });
      const settle = (answer: ElicitationAnswer) => {
        if (!this.#pending.delete(info.elicitationId)) return;
        if (timer) clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      if (signal.aborted) return resolve({ action: "cancel" });
      this.#pending.set(info.elicitationId, { info, settle });
      signal.addEventListener("abort", onAbort, { once: true });
      if (this.#timeoutMs > 0) {
        timer = setTimeout(() => settle({ action: "decline" }), this.#timeoutMs);
        timer.unref();
      }
    });

  list(): PendingElicitation[] {
    return [...this.#pending.values()].map((w) => w.info);
  }

  count(): number {
    return this.#pending.size;
  }

  /** Answer one; throws a CapgateError (`invalid_request`) naming the field when accepted content does not fit the form. */
  answer(id: string, answer: ElicitationAnswer): PendingElicitation {
    const waiter = this.#pending.get(id);
    if (!waiter)
      throw new CapgateError(
        "elicitation_not_found",
        `No pending elicitation '${id.slice(0, 64)}' (it may have been answered or timed out). GET /elicitations lists them.`,
      );
    if (answer.action === "accept") checkContent(waiter.info.fields, answer.content);
    waiter.settle(answer);
    return waiter.info;
  }

  declineAll(): void {
    for (const waiter of [...this.#pending.values()]) waiter.settle({ action: "decline" });
  }
}

function checkContent(fields: ElicitationField[], content: Record<string, unknown>): void {
  const bad = (property: string, message: string) =>
    new CapgateError("invalid_request", message, { property: `content.${property}` });
  for (const key of Object.keys(content))
    if (!fields.some((f) => f.name === key)) throw bad(key, `The form has no field '${key}'.`);
  for (const field of fields) {
    const value = content[field.name];
    if (value === undefined) {
      if (field.required && field.default === undefined)
        throw bad(field.name, `'${field.name}' is required.`);
      continue;
    }
    const ok = field.multiple
      ? Array.isArray(value) && value.every((v) => field.choices?.some((c) => c.value === v))
      : field.choices
        ? field.choices.some((c) => c.value === value)
        : field.type === "boolean"
          ? typeof value === "boolean"
          : field.type === "string"
            ? typeof value === "string"
            : typeof value === "number" && (field.type === "number" || Number.isInteger(value));
    if (!ok)
      throw bad(
        field.name,
        `'${field.name}' must be ${field.choices ? `one of ${field.choices.map((c) => c.value).join(", ")}` : `a ${field.type}`}.`,
      );
  }
}

/** One OAuth server's login state for the operator (never a token). */
export interface McpLoginView {
  server: string;
  auth: McpAuthStatus;
  /** A login started by POST /mcp-logins/:server that waits for its redirect. */
  pending?: { authorizationUrl: string; startedAt: string };
  /** How the last login from here ended. */
  last?: { ok: boolean; at: string; message: string };
}

/**
 * Logins of the configured OAuth servers, started by the operator: POST
 * /mcp-logins/:server begins the authorization-code flow and answers with the URL to
 * open; the redirect lands on a loopback listener on 127.0.0.1 of this machine, and the
 * tokens go to $CAPGATE_HOME/mcp-auth/ as with `capgate mcp login`.
 */
export class McpLoginRegistry {
  readonly #harness: Harness;
  readonly #pending = new Map<
    string,
    { authorizationUrl: string; startedAt: string; abort: AbortController }
  >();
  readonly #last = new Map<string, { ok: boolean; at: string; message: string }>();
  readonly #timeoutMs: number;

  constructor(harness: Harness, options: { timeoutMs?: number } = {}) {
    this.#harness = harness;
    this.#timeoutMs = options.timeoutMs ?? 300_000;
  }

  #servers(): Array<[string, McpServerConfig]> {
    const servers = this.#harness.mcp?.servers ?? {};
    return Object.entries(servers).filter(([, c]) => isHttpServer(c) && c.oauth !== undefined);
  }

  async list(): Promise<McpLoginView[]> {
    const store = fileAuthStore(this.#harness.stateDir);
    const servers = this.#harness.mcp?.servers ?? {};
    const views: McpLoginView[] = [];
    for (const [server] of this.#servers()) {
      const config = servers[server];
      if (!config) continue;
      const view: McpLoginView = { server, auth: describeAuth(config, await store.load(server)) };
      const pending = this.#pending.get(server);
      if (pending)
        view.pending = { authorizationUrl: pending.authorizationUrl, startedAt: pending.startedAt };
      const last = this.#last.get(server);
      if (last) view.last = last;
      views.push(view);
    }
    return views;
  }

  count(): number {
    return this.#pending.size;
  }

  /** Start a login and resolve with the authorization URL (a login already waiting gives its URL again). */
  async start(server: string): Promise<{ server: string; authorizationUrl: string }> {
    const existing = this.#pending.get(server);
    if (existing) return { server, authorizationUrl: existing.authorizationUrl };
    const config = this.#harness.mcp?.servers[server];
    if (!config || !isHttpServer(config) || !config.oauth) {
      const names = this.#servers().map(([name]) => name);
      throw new CapgateError(
        "not_found",
        `No MCP server '${server.slice(0, 64)}' with "oauth" in the config (OAuth servers: ${names.length ? names.join(", ") : "none"}).`,
        { property: "server" },
      );
    }
    const abort = new AbortController();
    const startedAt = new Date().toISOString();
    return new Promise((resolve, reject) => {
      let handedOut = false;
      const login = loginMcpServer(server, config, {
        store: fileAuthStore(this.#harness.stateDir),
        timeoutMs: this.#timeoutMs,
        signal: abort.signal,
        onAuthorizationUrl: (url) => {
          this.#pending.set(server, { authorizationUrl: url.href, startedAt, abort });
          handedOut = true;
          resolve({ server, authorizationUrl: url.href });
        },
      });
      login
        .then(
          (result) => {
            this.#last.set(server, {
              ok: true,
              at: new Date().toISOString(),
              message: `logged in; ${result.tools} tool(s)`,
            });
            // Sessions opened before the login hold no token: the next call reconnects with it.
            if (!handedOut) resolve({ server, authorizationUrl: "" });
          },
          (error: unknown) => {
            const message = error instanceof Error ? error.message : String(error);
            this.#last.set(server, { ok: false, at: new Date().toISOString(), message });
            if (!handedOut) reject(new CapgateError("mcp_auth_failed", message, { property: "server" }));
          },
        )
        .finally(() => this.#pending.delete(server));
    });
  }

  cancelAll(): void {
    for (const entry of this.#pending.values()) entry.abort.abort();
  }
}
