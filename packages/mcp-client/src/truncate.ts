const encoder = new TextEncoder();
const decoder = new TextDecoder();

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

function marker(omitted: number): string {
  return `\n…[${omitted} bytes truncated]…\n`;
}

/**
 * Keep the head and tail of `text` within `maxBytes` of UTF-8 with a marker in the middle,
 * cutting on character boundaries. The same contract as @capgate/tools' truncateMiddle,
 * re-implemented here because mcp-client depends only on @capgate/schema.
 */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return { text, truncated: false };
  const reserve = encoder.encode(marker(bytes.length)).length;
  const budget = Math.max(0, maxBytes - reserve);
  let headEnd = Math.floor(budget / 2);
  while (headEnd > 0 && isContinuation(bytes[headEnd])) headEnd--;
  let tailStart = bytes.length - (budget - headEnd);
  while (tailStart < bytes.length && isContinuation(bytes[tailStart])) tailStart++;
  const out =
    decoder.decode(bytes.subarray(0, headEnd)) +
    marker(tailStart - headEnd) +
    decoder.decode(bytes.subarray(tailStart));
  return { text: out, truncated: true };
}
