import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as root from "./index.js";

// Pins the public surface: adding or removing a name here is an API decision.
describe("public exports", () => {
  it("root entry", () => {
    expect(Object.keys(root).sort()).toEqual(["startTelemetry", "telemetrySettings"]);
  });

  it("the built root imports no OpenTelemetry module: the SDK chunk is loaded by startTelemetry only", () => {
    const built = readFileSync(new URL("../dist/index.js", import.meta.url), "utf8");
    expect(built).not.toMatch(/from\s*["']@opentelemetry/);
    expect(built).not.toMatch(/^import\s*["']/m);
    expect(built).toMatch(/import\(["']\.\/sdk-[\w-]+\.js["']\)/);
  });
});
