import type { ManifestLike } from "@capgate/tools";

const url = {
  type: "string",
  minLength: 1,
  maxLength: 8192,
  pattern: "^https?://",
  format: "uri",
  description: "Absolute http:// or https:// URL.",
} as const;

/**
 * The web capability: plain HTTP. Both tools pass the network guard (http/https only,
 * private, loopback and link-local addresses blocked, re-checked on every redirect).
 */
export const manifest = {
  name: "web",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Read pages from the internet as text (articles, documentation, sources to cite) and call HTTP APIs (REST, JSON). Private, loopback and link-local addresses are blocked.",
  profileFit: ["Researcher"],
  tools: [
    {
      name: "web.fetch",
      description:
        "Download a web page or document and return its readable text (main content as Markdown, scripts and navigation stripped), following redirects. Use browser_panel.open for pages that need JavaScript or clicking, web.request for APIs.",
      risk: "network",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          url,
          max_bytes: {
            type: "integer",
            minimum: 1024,
            maximum: 10485760,
            description:
              "Stop downloading after this many bytes (default 2097152; never above the host's fetch limit).",
          },
        },
        required: ["url"],
      },
    },
    {
      name: "web.request",
      description:
        "Send an HTTP request (e.g. to a JSON API) and return the status, response headers and body as text. Same address rules as web.fetch; use web.fetch to read pages.",
      risk: "network",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          method: {
            type: "string",
            enum: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            description: "HTTP method, upper case.",
          },
          url,
          headers: {
            type: "object",
            maxProperties: 100,
            propertyNames: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
            additionalProperties: { type: "string", maxLength: 8192 },
            description: 'Request headers as name → value, e.g. {"Accept": "application/json"}.',
          },
          body: {
            type: "string",
            maxLength: 1048576,
            description: "Request body as text; for JSON send the serialized JSON and a Content-Type header.",
          },
        },
        required: ["method", "url"],
      },
    },
  ],
} as const satisfies ManifestLike;
