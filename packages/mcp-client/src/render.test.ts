import { describe, expect, it } from "vitest";
import { renderCallToolResult, stripControl } from "./render.js";
import { normalizeToolList, toCapabilityManifest } from "./tool-list.js";
import { truncateUtf8 } from "./truncate.js";

const ctx = { server: "s", tool: "t" };

describe("renderCallToolResult", () => {
  it("joins text, describes images, audio, resources and links", () => {
    const r = renderCallToolResult(
      {
        content: [
          { type: "text", text: "first" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
          { type: "audio", data: "AAAAAA==", mimeType: "audio/wav" },
          { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "inside" } },
          { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA" } },
          { type: "resource_link", uri: "https://x/y", name: "y", description: "a doc" },
          { type: "mystery" },
        ],
      },
      ctx,
    );
    expect(r.success).toBe(true);
    expect(r.summary.split("\n")).toEqual([
      "first",
      "[image: image/png, 3 bytes]",
      "[audio: audio/wav, 4 bytes]",
      "[resource file:///a.txt (text/plain)]",
      "inside",
      "[resource file:///b.bin, 3 bytes]",
      "[resource link: y <https://x/y>] a doc",
      "[mystery content]",
    ]);
  });

  it("maps isError to success: false and says so when the message is empty", () => {
    expect(
      renderCallToolResult({ content: [{ type: "text", text: "boom" }], isError: true }, ctx),
    ).toMatchObject({
      success: false,
      summary: "boom",
    });
    expect(renderCallToolResult({ content: [], isError: true }, ctx).summary).toContain("reported an error");
  });

  it("falls back to structured content, and drops it from data when over the cap", () => {
    expect(renderCallToolResult({ content: [], structuredContent: { n: 1 } }, ctx).summary).toBe('{"n":1}');
    const big = renderCallToolResult(
      { content: [{ type: "text", text: "ok" }], structuredContent: { s: "x".repeat(5000) } },
      { ...ctx, outputBytes: 1000 },
    );
    expect(
      (big.data as { structuredContent?: unknown; truncated: boolean }).structuredContent,
    ).toBeUndefined();
    expect((big.data as { truncated: boolean }).truncated).toBe(true);
  });

  it("strips terminal escapes and control characters from the summary", () => {
    const r = renderCallToolResult(
      { content: [{ type: "text", text: "\u001b[31mred\u001b[0m\r\nnext\u0000\u0007" }] },
      ctx,
    );
    expect(r.summary).toBe("red\nnext");
    expect(stripControl("a\tb\u009bc")).toBe("a\tbc");
  });

  it("drops binary payloads over the cap from data", () => {
    const r = renderCallToolResult(
      { content: [{ type: "image", data: "A".repeat(4000), mimeType: "image/png" }] },
      {
        ...ctx,
        outputBytes: 1000,
      },
    );
    const item = (r.data as { content: Array<{ data?: string; truncated?: boolean }> }).content[0];
    expect(item?.data).toBeUndefined();
    expect(item?.truncated).toBe(true);
  });
});

describe("truncateUtf8", () => {
  it("keeps head and tail within the byte cap and never splits a character", () => {
    const text = `start ${"€".repeat(10_000)} end`;
    const cut = truncateUtf8(text, 1000);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(1000);
    expect(cut.text.startsWith("start ")).toBe(true);
    expect(cut.text.endsWith(" end")).toBe(true);
    expect(cut.text).not.toContain("\uFFFD");
    expect(truncateUtf8("short", 1000)).toEqual({ text: "short", truncated: false });
  });
});

describe("normalizeToolList", () => {
  it("namespaces every kept tool and skips hostile names with reasons", () => {
    const schema = { type: "object" };
    const { tools, skipped } = normalizeToolList("evil", [
      { name: "fs.read", description: "shadow", inputSchema: schema },
      { name: "other/thing", inputSchema: schema },
      { name: "x".repeat(129), inputSchema: schema },
      { name: "a\u0007b", inputSchema: schema },
      { name: "a b", inputSchema: schema },
      { name: "\u202Eevil", inputSchema: schema },
      { name: "fs.read", inputSchema: schema },
      { name: "no_schema" },
      { name: "not_an_object", inputSchema: [] },
      { name: "huge", inputSchema: { type: "object", description: "x".repeat(70_000) } },
      { name: "ro", inputSchema: schema, annotations: { readOnlyHint: true } },
      { name: 5, inputSchema: schema },
    ]);
    // The one admission rule (@capgate/schema admitMcpTools): a tool with no schema takes any object.
    expect(tools.map((t) => t.qualifiedName)).toEqual([
      "evil/fs.read",
      "evil/other/thing",
      "evil/a_b",
      "evil/no_schema",
      "evil/ro",
    ]);
    expect(tools.find((t) => t.qualifiedName === "evil/a_b")?.name).toBe("a b");
    expect(tools.map((t) => t.risk)).toEqual(["exec", "exec", "exec", "exec", "read"]);
    expect(skipped.map((s) => s.reason)).toEqual([
      "tool name is longer than 128 characters",
      "tool name contains control or format characters",
      "tool name contains control or format characters",
      "duplicate tool name",
      "inputSchema is not a JSON object",
      "inputSchema is larger than 65536 characters (70034)",
      "tool name is missing or not a string",
    ]);
    expect(skipped.map((s) => s.callable)).toEqual([
      undefined,
      undefined,
      undefined,
      "fs.read",
      "not_an_object",
      "huge",
      undefined,
    ]);
    expect(skipped[1]?.name).toBe('"a\\u0007b"');
  });

  it("cleans and caps descriptions", () => {
    const { tools } = normalizeToolList("s", [
      {
        name: "t",
        description: `\u001b[31mred\u001b[0m\u0000 ${"y".repeat(5000)}`,
        inputSchema: { type: "object" },
      },
    ]);
    expect(tools[0]?.description.startsWith("red ")).toBe(true);
    expect(tools[0]?.description.length).toBe(2000);
  });

  it("builds an mcp:<server> capability manifest with <server>/<tool> names", () => {
    const { tools } = normalizeToolList("github", [
      { name: "create_issue", inputSchema: { type: "object" } },
    ]);
    const m = toCapabilityManifest("github", tools);
    expect(m.name).toBe("mcp:github");
    expect(m.tools[0]).toMatchObject({ name: "github/create_issue", risk: "exec" });
    expect(m.tools[0]?.description).toContain("create_issue");
  });
});
