import { CapgateError } from "@capgate/schema";

/** The `telemetry` section of capgate.config.json. Environment variables take precedence. */
export interface TelemetryConfig {
  /**
   * `true` exports traces; `false` never does, whatever the environment says. Absent: on
   * when the environment names an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`,
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or `OTEL_TRACES_EXPORTER=otlp`.
   */
  enabled?: boolean;
  /** Base OTLP/HTTP endpoint, like `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` is appended). Default http://localhost:4318. */
  endpoint?: string;
  /** `http/protobuf` (default) or `http/json`. */
  protocol?: TelemetryProtocol;
  /** Headers on every export request (an API key of the collector), added to `OTEL_EXPORTER_OTLP_HEADERS`. */
  headers?: Record<string, string>;
  /** `service.name` of the spans (default `capgate`; `OTEL_SERVICE_NAME` wins). */
  serviceName?: string;
  /**
   * `true` puts the goal, tool arguments, tool results, policy messages and model replies on
   * the spans. Default false: spans carry names, sizes, outcomes and token counts only.
   * Also `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
   */
  captureContent?: boolean;
}

export type TelemetryProtocol = "http/protobuf" | "http/json";

const PROTOCOLS: readonly TelemetryProtocol[] = ["http/protobuf", "http/json"];

/** What an enabled telemetry exports, and where: the config and the environment resolved. */
export interface TelemetrySettings {
  /** The full traces URL (…/v1/traces). */
  url: string;
  protocol: TelemetryProtocol;
  headers: Record<string, string>;
  serviceName: string;
  captureContent: boolean;
}

const DEFAULT_ENDPOINT = "http://localhost:4318";

/**
 * Whether traces are exported, and how — from the config's `telemetry` section and the
 * standard OpenTelemetry variables (`OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER`,
 * `OTEL_EXPORTER_OTLP[_TRACES]_{ENDPOINT,PROTOCOL,HEADERS}`, `OTEL_SERVICE_NAME`). Pure:
 * nothing is imported or started; `undefined` means off. Throws `invalid_config` naming
 * the variable or property for a value that cannot be used.
 */
export function telemetrySettings(
  config: TelemetryConfig | undefined,
  env: Record<string, string | undefined> = process.env,
): TelemetrySettings | undefined {
  if (isTrue(env.OTEL_SDK_DISABLED) || config?.enabled === false) return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.includes("none") && config?.enabled !== true) return undefined;
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const baseEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const wanted =
    config?.enabled === true ||
    tracesEndpoint !== undefined ||
    baseEndpoint !== undefined ||
    exporters.includes("otlp");
  if (!wanted) return undefined;

  // The signal-specific variable is the URL as given; the base ones get /v1/traces (OTLP spec).
  const url =
    tracesEndpoint !== undefined
      ? checkUrl(tracesEndpoint, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
      : baseEndpoint !== undefined
        ? tracesUrl(checkUrl(baseEndpoint, "OTEL_EXPORTER_OTLP_ENDPOINT"))
        : tracesUrl(checkUrl(config?.endpoint ?? DEFAULT_ENDPOINT, "telemetry.endpoint"));

  const protocolSource = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL)
      ? "OTEL_EXPORTER_OTLP_PROTOCOL"
      : "telemetry.protocol";
  const protocol =
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ??
    nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ??
    config?.protocol ??
    "http/protobuf";
  if (!(PROTOCOLS as readonly string[]).includes(protocol))
    throw invalid(
      protocolSource,
      `${protocolSource} is '${protocol}'; capgate exports traces over OTLP/HTTP: use 'http/protobuf' (default) or 'http/json'${protocol === "grpc" ? " (a collector listens for both on port 4318)" : ""}.`,
    );

  const headers = {
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, "OTEL_EXPORTER_OTLP_HEADERS"),
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
    ...(config?.headers ?? {}),
  };
  const captureContent =
    config?.captureContent ?? isTrue(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT);
  const serviceName = nonEmpty(env.OTEL_SERVICE_NAME) ?? config?.serviceName ?? "capgate";
  return { url, protocol: protocol as TelemetryProtocol, headers, serviceName, captureContent };
}

function isTrue(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === "true";
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function checkUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(source, `${source} must be an http:// or https:// URL, got ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalid(source, `${source} must be an http:// or https:// URL, got ${JSON.stringify(value)}.`);
  return url.href;
}

/** `<base>/v1/traces`, as the OTLP exporter spec builds it from a base endpoint. */
function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

/** `k=v,k2=v2` with percent-encoded values (the W3C baggage form the OTel variables use). */
function parseHeaders(value: string | undefined, source: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (value ?? "").split(",")) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) throw invalid(source, `${source} must be key=value pairs separated by commas.`);
    try {
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw invalid(source, `${source} holds a value that is not valid percent-encoding.`);
    }
  }
  return out;
}

function invalid(property: string, message: string): CapgateError {
  return new CapgateError("invalid_config", message, { property });
}
