import { describeExit, type ProcessResult } from "@capgate/sandbox";
import { truncateMiddle, truncationMarker } from "@capgate/schema";

/** Room kept in a summary for the headers around the output (command line, labels). */
const HEADER_BYTES = 512;

/** A command line on one short line, for headers. */
export function clipCommand(command: string, max = 160): string {
  const one = command.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return one.length > max ? `${one.slice(0, max - 3)}...` : one;
}

/**
 * Split `budget` bytes between stdout and stderr: a stream that fits in half keeps all of
 * it and the other gets the rest, so a short error message is never cut because stdout
 * flooded (and vice versa).
 */
export function splitBudget(outBytes: number, errBytes: number, budget: number): [number, number] {
  if (outBytes + errBytes <= budget) return [outBytes, errBytes];
  const half = Math.floor(budget / 2);
  if (outBytes <= half) return [outBytes, budget - outBytes];
  if (errBytes <= half) return [budget - errBytes, errBytes];
  return [half, budget - half];
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** The first `max` UTF-8 bytes of `text`, cut on a character boundary. */
function headBytes(text: string, max: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && isContinuation(bytes[end])) end--;
  return bytes.subarray(0, end).toString();
}

/** The last `max` UTF-8 bytes of `text`, cut on a character boundary. */
function tailBytes(text: string, max: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return text;
  let start = bytes.length - max;
  while (start < bytes.length && isContinuation(bytes[start])) start++;
  return bytes.subarray(start).toString();
}

/**
 * Fit captured output into `max` bytes. When the capture itself already cut the middle
 * (head + marker + tail), cutting again must not keep the old marker's count: split at the
 * marker, trim head and tail, and mark what is missing now out of `totalBytes` written.
 */
export function fitCaptured(text: string, totalBytes: number, max: number): string {
  const size = Buffer.byteLength(text);
  if (size <= max) return text;
  const split = splitAtMarker(text, totalBytes);
  if (!split) return truncateMiddle(text, max).text; // the capture was whole: one ordinary cut
  const room = Math.max(0, max - Buffer.byteLength(truncationMarker(totalBytes)));
  const head = headBytes(split.head, Math.floor(room / 2));
  const tail = tailBytes(split.tail, room - Math.floor(room / 2));
  const omitted = totalBytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  return head + truncationMarker(omitted) + tail;
}

/** Head and tail around the capture's own marker, found from the sizes (not by guessing at text). */
function splitAtMarker(text: string, totalBytes: number): { head: string; tail: string } | undefined {
  const size = Buffer.byteLength(text);
  if (totalBytes <= size) return undefined;
  // size = kept + marker(omitted) and omitted = total - kept; the marker's length depends on
  // the digits of omitted, so try each digit count.
  for (let digits = 1; digits <= 16; digits++) {
    const markerBytes = Buffer.byteLength(truncationMarker(10 ** (digits - 1)));
    const omitted = totalBytes - (size - markerBytes);
    if (String(omitted).length !== digits) continue;
    const marker = truncationMarker(omitted);
    const at = text.indexOf(marker);
    if (at !== -1) return { head: text.slice(0, at), tail: text.slice(at + marker.length) };
  }
  return undefined;
}

function section(label: string, text: string, totalBytes: number, share: number): string {
  if (totalBytes === 0) return "";
  const kept = fitCaptured(text, totalBytes, share);
  const note = totalBytes > Buffer.byteLength(kept) ? `, ${totalBytes} bytes, head and tail kept` : "";
  const body = kept.endsWith("\n") ? kept : `${kept}\n`;
  return `--- ${label}${note} ---\n${body}`;
}

/**
 * The model-facing summary of a finished command: how it ended, then stdout and stderr,
 * each labelled, fitting `maxBytes` in total (head and tail of each stream kept).
 */
export function formatRun(
  command: string,
  cwdLabel: string,
  result: ProcessResult,
  timeoutMs: number,
  maxBytes: number,
): string {
  const where = cwdLabel === "." ? "" : ` (in ${cwdLabel})`;
  const ending = result.timedOut
    ? `timed out after ${timeoutMs} ms; its whole process group was killed`
    : describeExit(result, timeoutMs);
  const header = `$ ${clipCommand(command)}${where}\n${ending}.\n`;
  if (result.stdoutBytes === 0 && result.stderrBytes === 0) return `${header}(no output)`;
  const budget = Math.max(256, maxBytes - HEADER_BYTES - Buffer.byteLength(header));
  const outKept = Buffer.byteLength(result.stdout);
  const errKept = Buffer.byteLength(result.stderr);
  const [outShare, errShare] = splitBudget(outKept, errKept, budget);
  return (
    header +
    section("stdout", result.stdout, result.stdoutBytes, outShare) +
    section("stderr", result.stderr, result.stderrBytes, errShare)
  ).trimEnd();
}

/** The end of `text` within `maxBytes` (the newest output matters for a background process). */
export function keepTail(text: string, maxBytes: number): string {
  return truncateMiddle(text, maxBytes, 0).text;
}
