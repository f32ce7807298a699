import { describe, expect, it } from "vitest";
import { telemetrySettings } from "./settings.js";

describe("telemetrySettings", () => {
  it("is off with no config and no OTEL_* variables", () => {
    expect(telemetrySettings(undefined, {})).toBeUndefined();
    expect(telemetrySettings({ endpoint: "http://collector:4318" }, {})).toBeUndefined();
  });

  it("turns on from the standard variables, appending /v1/traces to the base endpoint only", () => {
    expect(telemetrySettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })).toEqual({
      url: "http://c:4318/v1/traces",
      protocol: "http/protobuf",
      headers: {},
      serviceName: "capgate",
      captureContent: false,
    });
    expect(
      telemetrySettings(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://c.example/otlp/traces" })
        ?.url,
    ).toBe("https://c.example/otlp/traces");
    expect(telemetrySettings(undefined, { OTEL_TRACES_EXPORTER: "otlp" })?.url).toBe(
      "http://localhost:4318/v1/traces",
    );
  });

  it("lets the variables win over the config, and the config's enabled:false or OTEL_SDK_DISABLED switch it off", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%20b,x=1",
      OTEL_SERVICE_NAME: "team-gate",
    };
    const settings = telemetrySettings(
      {
        enabled: true,
        endpoint: "http://config:4318",
        protocol: "http/protobuf",
        headers: { y: "2" },
        serviceName: "x",
      },
      env,
    );
    expect(settings).toEqual({
      url: "http://env:4318/v1/traces",
      protocol: "http/json",
      headers: { "api-key": "a b", x: "1", y: "2" },
      serviceName: "team-gate",
      captureContent: false,
    });
    expect(telemetrySettings({ enabled: false }, env)).toBeUndefined();
    expect(telemetrySettings({ enabled: true }, { OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(telemetrySettings(undefined, { ...env, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
  });

  it("captures content only when asked", () => {
    expect(telemetrySettings({ enabled: true, captureContent: true }, {})?.captureContent).toBe(true);
    expect(
      telemetrySettings({ enabled: true }, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" })
        ?.captureContent,
    ).toBe(true);
  });

  it("refuses unusable values, naming the variable or property", () => {
    expect(() => telemetrySettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "file:///tmp/x" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => telemetrySettings({ enabled: true, endpoint: "collector" }, {})).toThrow(
      /telemetry\.endpoint/,
    );
    expect(() =>
      telemetrySettings(undefined, {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL is 'grpc'.*port 4318/);
    expect(() =>
      telemetrySettings(undefined, {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
        OTEL_EXPORTER_OTLP_HEADERS: "novalue",
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_HEADERS must be key=value/);
  });
});
