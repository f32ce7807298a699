import { describe, expect, it } from "vitest";
import { describeCapability, describeCatalog } from "./catalog-text.js";

describe("describeCapabilitySource", () => {
  it("names where a capability came from", async () => {
    const { describeCapabilitySource } = await import("./catalog-text.js");
    expect(describeCapabilitySource({ kind: "builtin" })).toBe("built-in");
    expect(describeCapabilitySource({ kind: "option" })).toBe("added by the host");
    expect(
      describeCapabilitySource({
        kind: "plugin",
        spec: "capgate-capability-weather",
        package: "capgate-capability-weather@1.2.0",
      }),
    ).toBe("capgate-capability-weather@1.2.0 (capgate-capability-weather)");
    expect(
      describeCapabilitySource({ kind: "plugin", spec: "./caps/hello", file: "/w/caps/hello/index.js" }),
    ).toBe("./caps/hello → /w/caps/hello/index.js");
    expect(describeCapabilitySource(undefined)).toBe("MCP server");
  });
});

const manifest = {
  name: "greet",
  version: "1.2.0",
  description: "Greets people.",
  profileFit: ["Orchestrator", "Coder"],
  tools: [
    {
      name: "greet.hello",
      description: "Say hello.",
      risk: "write" as const,
      inputSchema: {
        type: "object" as const,
        properties: { who: { type: "string" as const } },
        required: ["who"],
      },
    },
  ],
};

describe("describeCatalog", () => {
  it("lists servers without tools first, each capability with its source, then where servers' tools came from", () => {
    const lines = describeCatalog({
      manifests: [manifest],
      sources: new Map([["greet", { kind: "plugin" as const, spec: "./greet.mjs", file: "/p/greet.mjs" }]]),
      servers: [
        { server: "down", tools: 0, skipped: 0, source: "none", error: "connection refused" },
        { server: "pw", tools: 21, skipped: 2, source: "cache" },
      ],
    });
    expect(lines).toEqual([
      "mcp:down 0 tools · not reachable: connection refused",
      "greet v1.2.0 · 1 tools · Orchestrator, Coder · ./greet.mjs → /p/greet.mjs",
      "  Greets people.",
      "mcp:pw: 21 tools (from the cache), 2 skipped",
    ]);
  });
});

describe("describeCapability", () => {
  it("shows each tool's signature, risk and description", () => {
    expect(describeCapability(manifest, { kind: "builtin" })).toEqual([
      "greet v1.2.0 · fits Orchestrator, Coder · built-in",
      "Greets people.",
      "\n  greet.hello(who: string) [write]",
      "    Say hello.",
    ]);
  });
});
