import { describe, expect, it } from "vitest";
import {
  bearerToken,
  checkHostAndOrigin,
  checkToken,
  generateToken,
  originPolicy,
  tokenMatcher,
} from "./http-security.js";

describe("tokens", () => {
  it("generates 43-character base64url tokens, different each time", () => {
    const a = generateToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateToken()).not.toBe(a);
  });

  it("refuses weak or malformed operator tokens, naming the source", () => {
    expect(() => checkToken("short", "CAPGATE_TOKEN")).toThrow(/CAPGATE_TOKEN.*16 to 512/);
    expect(() => checkToken("has a space in the middle", "the token option")).toThrow(/whitespace/);
    expect(() => checkToken("ünïcödé-token-123456", "x")).toThrow();
    expect(checkToken("a-good-token-0123456789", "x")).toBe("a-good-token-0123456789");
  });

  it("matches exactly the expected token", () => {
    const matches = tokenMatcher("the-right-token-0123456789");
    expect(matches("the-right-token-0123456789")).toBe(true);
    for (const wrong of [
      undefined,
      "",
      "the-right-token-012345678",
      "the-right-token-01234567890",
      "THE-RIGHT-TOKEN-0123456789",
      "the-right-token-0123456789\u0000",
      "the-right-token-012345678\u0139", // latin1 would keep only its low byte, '9'
      "the-right-token-0123456789".padEnd(600, "x"),
    ]) {
      expect(matches(wrong)).toBe(false);
    }
    // The padded comparison reuses one buffer: a long wrong token must not leave bytes behind.
    expect(matches("the-right-token-0123456789-and-more")).toBe(false);
    expect(matches("the-right-token-0123456789")).toBe(true);
  });

  it("matches a token of the longest accepted length, and no longer one with the same start", () => {
    const longest = "k".repeat(512);
    const matches = tokenMatcher(longest);
    expect(matches(longest)).toBe(true);
    expect(matches(`${longest}k`)).toBe(false);
    expect(matches(longest.slice(0, 511))).toBe(false);
    expect(() => tokenMatcher("k".repeat(513))).toThrow(/512/);
  });

  it("reads only a well-formed bearer header", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc")).toBe("abc");
    for (const bad of [undefined, "abc", "Basic abc", "Bearer", "Bearer a b", "Bearerabc", ["Bearer abc"]]) {
      expect(bearerToken(bad)).toBeUndefined();
    }
  });
});

describe("Host and Origin policy", () => {
  const policy = originPolicy({ host: "127.0.0.1", port: 7777, extraHosts: ["capgate.internal:8443"] });

  it("accepts the local names with the bound port and configured extra hosts", () => {
    for (const host of [
      "127.0.0.1:7777",
      "localhost:7777",
      "LOCALHOST:7777",
      "[::1]:7777",
      "capgate.internal:8443",
    ]) {
      expect(checkHostAndOrigin(policy, host, undefined)).toEqual({ ok: true });
    }
  });

  it("refuses other names, other ports and a missing Host", () => {
    for (const host of [
      undefined,
      "evil.example.com",
      "127.0.0.1",
      "127.0.0.1:7778",
      "localhost.evil.com:7777",
      "0.0.0.0:7777",
    ]) {
      expect(checkHostAndOrigin(policy, host, undefined)).toMatchObject({
        ok: false,
        code: "forbidden_host",
      });
    }
  });

  it("accepts the server's own origins and refuses foreign ones and null", () => {
    expect(checkHostAndOrigin(policy, "127.0.0.1:7777", "http://127.0.0.1:7777")).toEqual({ ok: true });
    expect(checkHostAndOrigin(policy, "127.0.0.1:7777", "http://localhost:7777")).toEqual({ ok: true });
    expect(checkHostAndOrigin(policy, "127.0.0.1:7777", "https://capgate.internal:8443")).toEqual({
      ok: true,
    });
    for (const origin of [
      "null",
      "http://evil.example.com",
      "http://127.0.0.1:7778",
      "https://127.0.0.1:7777",
      "file://",
    ]) {
      expect(checkHostAndOrigin(policy, "127.0.0.1:7777", origin)).toMatchObject({
        ok: false,
        code: "forbidden_origin",
      });
    }
  });

  it("accepts the bound IP literal but never the wildcard address", () => {
    const lan = originPolicy({ host: "192.168.1.5", port: 80 });
    expect(checkHostAndOrigin(lan, "192.168.1.5", undefined)).toEqual({ ok: true });
    expect(checkHostAndOrigin(lan, "localhost", undefined)).toEqual({ ok: true });
    const any = originPolicy({ host: "0.0.0.0", port: 7777 });
    expect(checkHostAndOrigin(any, "0.0.0.0:7777", undefined)).toMatchObject({ ok: false });
  });

  it("never allows a null origin even when configured", () => {
    const p = originPolicy({
      host: "127.0.0.1",
      port: 1,
      extraOrigins: ["null", "https://app.example.com/"],
    });
    expect(checkHostAndOrigin(p, "127.0.0.1:1", "null")).toMatchObject({ ok: false });
    expect(checkHostAndOrigin(p, "127.0.0.1:1", "https://app.example.com")).toEqual({ ok: true });
  });
});
