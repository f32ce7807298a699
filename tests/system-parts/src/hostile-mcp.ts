import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The MCP client's hostile server, built on the SDK (`node HOSTILE_SERVER [count]`):
 * `count` ordinary tools (10,000 by default), names with an escape sequence and a
 * right-to-left override, a 375 KB schema, $ref loops, an unknown type. Each call it
 * receives is appended as one JSON line to the file named by `HOSTILE_CALL_LOG`.
 */
export const HOSTILE_SERVER = fileURLToPath(
  new URL("../../../packages/mcp-client/test/fixtures/hostile-sdk-server.mjs", import.meta.url),
);

/** What capgate's replies to the gate's search and load may hold at most (@capgate/loop REPLY_CHARS). */
export const REPLY_CHARS = 6_000;

/** The hostile server's tools every surface must refuse, with the reason it must give. */
export const HOSTILE_REFUSED: ReadonlyArray<readonly [tool: string, why: string]> = [
  ["hostile/ref_loop", "does not admit it: inputSchema has a $ref loop that never reaches a nested value"],
  [
    "hostile/ref_loop_beside",
    "does not admit it: inputSchema has a $ref loop that never reaches a nested value",
  ],
  ["hostile/bad_type", "does not admit it: inputSchema does not compile"],
  ["hostile/huge_schema", "does not admit it: inputSchema is larger than 65536 characters"],
  ["hostile/esc\u001b[31mred", "is not a tool name capgate admits for MCP server 'hostile'"],
  ["hostile/\u202Eevil_rtl", "is not a tool name capgate admits for MCP server 'hostile'"],
];

/** The tool names the hostile server was called with (from its HOSTILE_CALL_LOG file), in order. */
export function hostileCalls(log: string): string[] {
  try {
    return readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string);
  } catch {
    return [];
  }
}

/** The text blocks of an MCP tool result, joined by newlines. */
export function resultText(result: unknown): string {
  return ((result as { content?: Array<{ text?: string }> }).content ?? [])
    .map((c) => c.text ?? "")
    .join("\n");
}
