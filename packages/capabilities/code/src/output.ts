import { truncateMiddle, truncationMarker } from "@capgate/schema";

const MARKER = /\n…\[(\d+) bytes truncated\]…\n/;

/**
 * Cut captured output down to `maxBytes`, keeping head and tail. The capture may already
 * carry a cut marker (runProcess keeps head+tail of each stream); then the head and tail
 * are shortened around it and the new marker counts every byte missing from the stream
 * (`totalBytes` is what the process wrote), so the number the model reads stays true.
 */
export function recut(text: string, totalBytes: number, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const found = MARKER.exec(text);
  if (!found) return truncateMiddle(text, maxBytes).text;
  const head = Buffer.from(text.slice(0, found.index));
  const tail = Buffer.from(text.slice(found.index + found[0].length));
  const room = Math.max(0, maxBytes - Buffer.byteLength(truncationMarker(totalBytes)));
  const headKeep = boundaryBefore(head, Math.min(head.length, Math.floor(room / 2)));
  const tailKeep = tail.length - boundaryAfter(tail, tail.length - Math.min(tail.length, room - headKeep));
  const omitted = totalBytes - headKeep - tailKeep;
  return (
    head.subarray(0, headKeep).toString("utf8") +
    truncationMarker(omitted) +
    tail.subarray(tail.length - tailKeep).toString("utf8")
  );
}

/**
 * Fit both streams into `budget` bytes: each gets half, and what one does not need goes to
 * the other; each is cut in the middle (head and tail kept, the cut marked).
 */
export function splitBudget(
  stdout: { text: string; totalBytes: number },
  stderr: { text: string; totalBytes: number },
  budget: number,
): [string, string] {
  const outBytes = Buffer.byteLength(stdout.text);
  const errBytes = Buffer.byteLength(stderr.text);
  if (outBytes + errBytes <= budget) return [stdout.text, stderr.text];
  const half = Math.floor(budget / 2);
  const errShare = errBytes <= half ? errBytes : Math.max(half, budget - outBytes);
  const outShare = budget - errShare;
  return [recut(stdout.text, stdout.totalBytes, outShare), recut(stderr.text, stderr.totalBytes, errShare)];
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** Largest cut ≤ `end` that does not split a UTF-8 character. */
function boundaryBefore(bytes: Buffer, end: number): number {
  let i = end;
  while (i > 0 && i < bytes.length && isContinuation(bytes[i])) i--;
  return i;
}

/** Smallest start ≥ `start` that does not split a UTF-8 character. */
function boundaryAfter(bytes: Buffer, start: number): number {
  let i = start;
  while (i < bytes.length && isContinuation(bytes[i])) i++;
  return i;
}
