const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface TruncateResult {
  text: string;
  truncated: boolean;
  /** Bytes removed from the middle. */
  omittedBytes: number;
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/**
 * Keep the head and the tail of `text` within `maxBytes` of UTF-8, marking the cut in
 * the middle. Cuts fall on character boundaries, so the result is always valid UTF-8.
 * Errors usually sit at the end of output and context at the start: keep both.
 */
export function truncateMiddle(text: string, maxBytes: number, headShare = 0.5): TruncateResult {
  // Fast path: a UTF-16 unit is at most 3 bytes.
  if (text.length * 3 <= maxBytes) return { text, truncated: false, omittedBytes: 0 };
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return { text, truncated: false, omittedBytes: 0 };
  return cutBytes(bytes, maxBytes, headShare);
}

/** Same as truncateMiddle for raw bytes (process output), decoding the kept parts. */
export function truncateBytes(bytes: Uint8Array, maxBytes: number, headShare = 0.5): TruncateResult {
  if (bytes.length <= maxBytes) return { text: decoder.decode(bytes), truncated: false, omittedBytes: 0 };
  return cutBytes(bytes, maxBytes, headShare);
}

/** The text put where output was cut: one marker style for every truncation in capgate. */
export function truncationMarker(omitted: number): string {
  return `\n…[${omitted} bytes truncated]…\n`;
}

const marker = truncationMarker;

function cutBytes(bytes: Uint8Array, maxBytes: number, headShare: number): TruncateResult {
  const reserve = encoder.encode(marker(bytes.length)).length;
  const budget = Math.max(0, maxBytes - reserve);
  let headEnd = Math.floor(budget * headShare);
  while (headEnd > 0 && isContinuation(bytes[headEnd])) headEnd--;
  let tailStart = bytes.length - (budget - headEnd);
  while (tailStart < bytes.length && isContinuation(bytes[tailStart])) tailStart++;
  const omitted = tailStart - headEnd;
  const text =
    decoder.decode(bytes.subarray(0, headEnd)) + marker(omitted) + decoder.decode(bytes.subarray(tailStart));
  return { text, truncated: true, omittedBytes: omitted };
}
