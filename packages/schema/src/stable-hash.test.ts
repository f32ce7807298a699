import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { argumentsHash, stableStringify } from "./stable-hash.js";

describe("argumentsHash", () => {
  it("is the SHA-256 of the canonical JSON: keys sorted at every depth, no whitespace", async () => {
    const args = { path: "a.txt", opts: { z: 1, a: [2, { y: true, b: null }] } };
    const canonical = '{"opts":{"a":[2,{"b":null,"y":true}],"z":1},"path":"a.txt"}';
    expect(stableStringify(args)).toBe(canonical);
    expect(await argumentsHash(args)).toBe(createHash("sha256").update(canonical).digest("hex"));
  });

  it("is the same whatever the key order, and differs for any changed value", async () => {
    const a = await argumentsHash({ command: "ls", cwd: "." });
    expect(await argumentsHash({ cwd: ".", command: "ls" })).toBe(a);
    expect(await argumentsHash({ cwd: ".", command: "ls " })).not.toBe(a);
    expect(await argumentsHash({ cwd: ".", command: "ls", extra: 1 })).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
});
