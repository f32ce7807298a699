import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as api from "./index.js";

// The public surface, pinned: a change here is an API decision and shows up in review.
describe("@capgate/models exports", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DEFAULT_TIMEOUT_MS",
      "ModelError",
      "createModel",
      "createScriptedModel",
      "isModelError",
      "parseModelSpec",
    ]);
  });

  it("imports no Node built-in at module level, so a browser bundle can use it", () => {
    const src = dirname(fileURLToPath(import.meta.url));
    const shipped = readdirSync(src).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "fake-provider-server.ts",
    );
    expect(shipped.length).toBeGreaterThan(5);
    for (const file of shipped) {
      expect(readFileSync(join(src, file), "utf8"), file).not.toMatch(/from\s+["']node:/);
    }
  });
});
