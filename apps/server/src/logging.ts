import type { FastifyServerOptions } from "fastify";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

export interface ServerLogOptions {
  /** Default "info". */
  level?: LogLevel;
  /** Where JSON log lines go (default stdout). */
  stream?: { write(line: string): unknown };
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  id?: string;
}

/**
 * The request log never carries a credential: requests are serialised as method, path
 * (the query string is dropped — a token pasted into a URL must not reach the log), and
 * address; headers are never serialised, and the Authorization/Cookie paths are redacted
 * as a second line of defence should anything log a raw request.
 */
export function loggerOptions(options: ServerLogOptions | false | undefined): FastifyServerOptions["logger"] {
  if (!options) return false;
  return {
    level: options.level ?? "info",
    ...(options.stream ? { stream: options.stream } : {}),
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "headers.authorization",
        "headers.cookie",
        "request.headers.authorization",
      ],
      censor: "[redacted]",
    },
    serializers: {
      req(request: LoggedRequest) {
        return {
          method: request.method,
          path: typeof request.url === "string" ? request.url.split("?")[0] : undefined,
          remoteAddress: request.ip,
        };
      },
      res(reply: { statusCode?: number }) {
        return { statusCode: reply.statusCode };
      },
    },
  };
}
