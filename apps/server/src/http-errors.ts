import { CapgateError } from "@capgate/schema";

/** The one error body of every route: `{ "error": { "code", "message", "property"? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; property?: string };
}

/** A CapgateError that already knows its HTTP status. */
export class HttpError extends CapgateError {
  readonly status: number;
  constructor(
    status: number,
    code: string,
    message: string,
    options: { property?: string; cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.name = "HttpError";
    this.status = status;
  }
}

/**
 * HTTP status of a CapgateError code. Rejections of a tool call keep the gateway's
 * contract (unknown_tool 404, invalid_arguments 400, policy_denied 403); MCP faults
 * are the upstream's fault (502, 504 for a timeout).
 */
const STATUS_BY_CODE: Record<string, number> = {
  invalid_request: 400,
  invalid_arguments: 400,
  invalid_json: 400,
  unknown_profile: 400,
  invalid_workspace: 400,
  invalid_run_id: 400,
  invalid_model_spec: 400,
  unknown_provider: 400,
  missing_api_key: 400,
  invalid_option: 400,
  scripted_invalid: 400,
  scripted_model_refused: 400,
  duplicate_header: 400,
  no_model: 400,
  invalid_config: 400,
  unauthorized: 401,
  policy_denied: 403,
  forbidden_host: 403,
  forbidden_origin: 403,
  unknown_tool: 404,
  not_found: 404,
  run_not_found: 404,
  approval_not_found: 404,
  elicitation_not_found: 404,
  method_not_allowed: 405,
  body_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  internal_error: 500,
  mcp_closed: 502,
  mcp_connect_failed: 502,
  // The upstream MCP server needs a login (POST /mcp-logins/:server) or refused the client.
  mcp_auth_required: 502,
  mcp_auth_failed: 502,
  mcp_rpc_error: 502,
  mcp_unavailable: 502,
  queue_unavailable: 503,
  shutting_down: 503,
  mcp_aborted: 503,
  mcp_timeout: 504,
};

/** Fastify's own errors, renamed to stable codes with messages a client can act on. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: "body_too_large",
    message: "The request body is larger than the 1 MiB limit.",
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "Send the body as JSON with `Content-Type: application/json`.",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: "invalid_request",
    message: "The Content-Length header does not match the body.",
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: "invalid_json",
    message: "The body is empty; send a JSON object.",
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    status: 400,
    code: "invalid_json",
    message: "The body is not valid JSON.",
  },
  FST_ERR_CTP_EMPTY_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "The Content-Type header is empty; send `Content-Type: application/json`.",
  },
  FST_ERR_CTP_INVALID_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "The Content-Type header is invalid; send `Content-Type: application/json`.",
  },
};

/**
 * Codes of the run store's own failures (@capgate/postgres, the file store): their
 * messages carry the database's words, a location or a row's content, so a client gets
 * a generic 503 and the server log the detail.
 */
const STORE_FAILURES = new Set([
  "database_unreachable",
  "database_rejected",
  "schema_too_new",
  "migration_failed",
  "store_failed",
  "event_conflict",
  "event_after_end",
  "events_not_stored",
]);

export interface HttpErrorResponse {
  status: number;
  body: ErrorBody;
}

/** Map anything thrown in a route to a status and the JSON error body. */
export function toErrorResponse(error: unknown): HttpErrorResponse {
  if (error instanceof HttpError || (CapgateError.isInstance(error) && "status" in error)) {
    const e = error as HttpError;
    return { status: e.status, body: errorBody(e.code, e.message, e.property) };
  }
  if (CapgateError.isInstance(error) && STORE_FAILURES.has(error.code)) {
    return {
      status: 503,
      body: errorBody(
        "store_unavailable",
        "The run store could not complete this request; try again. The server log has the details.",
      ),
    };
  }
  if (CapgateError.isInstance(error)) {
    return {
      status: STATUS_BY_CODE[error.code] ?? 400,
      body: errorBody(error.code, error.message, error.property),
    };
  }
  const fastifyCode = (error as { code?: unknown } | null)?.code;
  if (typeof fastifyCode === "string") {
    const known = FASTIFY_ERRORS[fastifyCode];
    if (known) return { status: known.status, body: errorBody(known.code, known.message) };
  }
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    // A parser or protocol error Fastify raised (e.g. proto poisoning in the JSON body).
    const message = error instanceof Error ? error.message : "The request is invalid.";
    return { status, body: errorBody(status === 400 ? "invalid_request" : "client_error", message) };
  }
  return {
    status: 500,
    body: errorBody("internal_error", "The server failed while handling this request; see the server log."),
  };
}

export function errorBody(code: string, message: string, property?: string): ErrorBody {
  return { error: property ? { code, message, property } : { code, message } };
}

export function statusForCode(code: string): number {
  return STATUS_BY_CODE[code] ?? 400;
}
