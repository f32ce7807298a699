import { readFileSync } from "node:fs";
import { type JsonSchema, validate } from "@capgate/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, type ServerProcess, startServerProcess } from "./test-support/server-process.js";

// Every HTTP error body is checked against the published schema (schemas/error.schema.json,
// linked from docs/server.md): real responses of a real server process, one per kind of refusal.

const schema = JSON.parse(
  readFileSync(new URL("../schemas/error.schema.json", import.meta.url), "utf8"),
) as JsonSchema;

let server: ServerProcess;
beforeAll(async () => {
  server = await startServerProcess({ files: { "a.txt": "a\n" } });
}, 180_000);
afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

async function conforms(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as { error: { code: string } };
  const verdict = validate(schema, body);
  expect(verdict.ok ? [] : verdict.errors).toEqual([]);
  expect(body.error.code).toBe(code);
}

describe("HTTP error bodies conform to schemas/error.schema.json", () => {
  it("the schema refuses a body of another shape", () => {
    expect(validate(schema, { error: "x" }).ok).toBe(false);
    expect(validate(schema, { error: { code: "x", message: "m", stack: "…" } }).ok).toBe(false);
  });

  it("on every kind of refusal", async () => {
    const url = server.url;
    await conforms(await fetch(`${url}/capabilities`), 401, "unauthorized");
    // A Host header fetch will not send: a raw request.
    const evil = await rawRequest(url, {
      path: "/capabilities",
      headers: { host: `evil.example.com:${server.port}`, authorization: `Bearer ${server.token}` },
    });
    expect(evil.status).toBe(403);
    const evilBody = evil.json<{ error: { code: string } }>();
    expect(validate(schema, evilBody).ok).toBe(true);
    expect(evilBody.error.code).toBe("forbidden_host");
    await conforms(await server.api("/no/such/route"), 404, "not_found");
    await conforms(
      await server.api("/tools/call", { body: { tool: "fs.reed", arguments: {} } }),
      404,
      "unknown_tool",
    );
    await conforms(
      await server.api("/tools/call", { body: { tool: "fs.read", arguments: { pth: "a.txt" } } }),
      400,
      "invalid_arguments",
    );
    await conforms(
      await server.api("/tools/call", { body: { tool: "fs.read", arguments: { path: "../../etc/passwd" } } }),
      403,
      "policy_denied",
    );
    await conforms(await server.api("/tools/call", { body: { tol: "fs.read" } }), 400, "invalid_request");
    await conforms(
      await fetch(`${url}/tools/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: "{not json",
      }),
      400,
      "invalid_json",
    );
    await conforms(
      await fetch(`${url}/tools/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "text/plain" },
        body: "x",
      }),
      415,
      "unsupported_media_type",
    );
    await conforms(await server.api("/runs/no-such-run"), 404, "run_not_found");
    await conforms(
      await server.api("/runs", { body: { goal: "g", profile: "Nobody" } }),
      400,
      "unknown_profile",
    );
  });
});
