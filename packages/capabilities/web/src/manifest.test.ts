import type { ToolRisk } from "@capgate/schema";
import { manifestSubpathProblems } from "@capgate/test-system-parts";
import { type ArgsOf, callContractProblem, manifestContractProblems } from "@capgate/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as entry from "./index.js";
import { manifest } from "./manifest.js";

// SPEC §6: tool names and argument names are part of the contract; risks are docs/profiles.md's table.
const EXPECTED: Record<string, [string, ToolRisk]> = {
  "web.fetch": ["web.fetch(url: string, max_bytes?: integer)", "network"],
  "web.request": ["web.request(method: enum, url: string, headers?: object, body?: string)", "network"],
};

// Calls a model might send: the valid ones must pass, the wrong ones must fail naming the culprit.
const VALID: [string, unknown][] = [
  ["web.fetch", { url: "https://example.com/docs" }],
  ["web.fetch", { url: "http://example.com", max_bytes: 65536 }],
  ["web.request", { method: "GET", url: "https://api.example.com/v1/items?limit=2" }],
  [
    "web.request",
    {
      method: "POST",
      url: "https://api.example.com/v1/items",
      headers: { "Content-Type": "application/json", "X-Trace-Id": "abc" },
      body: '{"name":"x"}',
    },
  ],
];

const INVALID: [string, unknown, string][] = [
  ["web.fetch", { url: "file:///etc/passwd" }, "url"],
  ["web.fetch", { url: "ftp://example.com" }, "url"],
  ["web.fetch", { uri: "https://example.com" }, "uri"],
  ["web.fetch", { url: "https://example.com", max_bytes: 1e9 }, "max_bytes"],
  ["web.request", { method: "get", url: "https://example.com" }, "method"],
  ["web.request", { method: "TRACE", url: "https://example.com" }, "method"],
  ["web.request", { method: "GET", url: "https://example.com", headers: { "Bad Header": "x" } }, "headers"],
  ["web.request", { method: "GET", url: "https://example.com", headers: { Accept: 1 } }, "headers.Accept"],
  ["web.request", { method: "POST", url: "https://example.com", body: { a: 1 } }, "body"],
  ["web.request", { url: "https://example.com" }, "method"],
];

describe("web manifest", () => {
  it("keeps its contract: SPEC names, arguments and risks; short descriptions; closed, described, bounded schemas", () => {
    expect(
      manifestContractProblems(manifest, { expected: EXPECTED, mayBeEmpty: [], version: "0.1.0" }),
    ).toEqual([]);
  });
  it.each(VALID)("accepts %s %j", (tool, args) => {
    expect(callContractProblem(manifest, tool, args)).toBeUndefined();
  });
  it.each(INVALID)("rejects %s %j naming `%s`", (tool, args, property) => {
    expect(callContractProblem(manifest, tool, args, property)).toBeUndefined();
  });

  it("exports the manifest and the capability built from it", () => {
    expect(Object.keys(entry).sort()).toEqual(["capability", "manifest"]);
    expect(entry.manifest).toBe(manifest);
    expect(entry.capability.manifest.tools.map((t) => t.name)).toEqual(manifest.tools.map((t) => t.name));
    expect([...entry.capability.handlers.keys()]).toEqual(["web.fetch", "web.request"]);
    expect([...entry.capability.policies.keys()]).toEqual(["web.fetch", "web.request"]);
  });

  it("offers the manifest alone at ./manifest, importing nothing at run time", async () => {
    expect(await manifestSubpathProblems(import.meta.url, manifest)).toEqual([]);
  });

  it("types handler arguments from the as-const schemas", () => {
    expectTypeOf<ArgsOf<typeof manifest, "web.request">["method"]>().toEqualTypeOf<
      "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS"
    >();
  });
});
