import { type TruncateResult, truncationMarker } from "@capgate/schema";

const decoder = new TextDecoder();

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/**
 * Captures a byte stream keeping only its head and its tail, as it streams: memory stays
 * at about `maxBytes` however much is written (a 20 MB flood retains ~maxBytes, not 20 MB).
 * `result()` gives the same shape and marker as `truncateBytes`: head, `…[N bytes
 * truncated]…`, tail, cut on UTF-8 boundaries and at most `maxBytes` long.
 * With `headShare` 0 it is a plain ring buffer of the last `maxBytes` (background logs).
 */
export class HeadTailCapture {
  readonly maxBytes: number;
  readonly headShare: number;
  readonly #headCap: number;
  readonly #tailCap: number;
  readonly #head: Uint8Array[] = [];
  #headLen = 0;
  #tail: Uint8Array[] = [];
  #tailLen = 0;
  #total = 0;
  #peak = 0;

  constructor(maxBytes: number, headShare = 0.5) {
    if (!Number.isInteger(maxBytes) || maxBytes < 0)
      throw new RangeError(`maxBytes must be a whole number ≥ 0, got ${maxBytes}`);
    this.maxBytes = maxBytes;
    this.headShare = Math.min(1, Math.max(0, headShare));
    this.#headCap = Math.floor(maxBytes * this.headShare);
    this.#tailCap = maxBytes - this.#headCap;
  }

  /** Bytes written so far, kept or not. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes currently held (for tests and diagnostics: bounded by maxBytes plus one chunk). */
  get retainedBytes(): number {
    return this.#headLen + this.#tailLen;
  }

  /** The most bytes ever held at once. */
  get peakRetainedBytes(): number {
    return this.#peak;
  }

  push(chunk: Uint8Array): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headLen < this.#headCap) {
      const take = Math.min(this.#headCap - this.#headLen, rest.length);
      this.#head.push(rest.subarray(0, take));
      this.#headLen += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.#tailCap === 0) {
      this.#notePeak();
      return;
    }
    if (rest.length >= this.#tailCap) {
      // Copy so a huge chunk's buffer is not kept alive by a small view.
      this.#tail = [Uint8Array.prototype.slice.call(rest, rest.length - this.#tailCap)];
      this.#tailLen = this.#tailCap;
      this.#notePeak();
      return;
    }
    this.#tail.push(rest);
    this.#tailLen += rest.length;
    this.#notePeak();
    while (this.#tail.length > 1 && this.#tailLen - this.#tail[0]!.length >= this.#tailCap) {
      this.#tailLen -= this.#tail.shift()!.length;
    }
  }

  #notePeak(): void {
    const held = this.#headLen + this.#tailLen;
    if (held > this.#peak) this.#peak = held;
  }

  /** True once more was written than fits. */
  get truncated(): boolean {
    return this.#total > this.maxBytes;
  }

  /** The captured text, marked where the middle was dropped. */
  result(): TruncateResult {
    const head = concat(this.#head, this.#headLen);
    const tailAll = concat(this.#tail, this.#tailLen);
    if (!this.truncated) {
      // Nothing dropped: head and tail are contiguous.
      const joined = new Uint8Array(head.length + tailAll.length);
      joined.set(head);
      joined.set(tailAll, head.length);
      return { text: decoder.decode(joined), truncated: false, omittedBytes: 0 };
    }
    const reserve = Buffer.byteLength(truncationMarker(this.#total));
    const budget = Math.max(0, this.maxBytes - reserve);
    let headEnd = Math.min(head.length, Math.floor(budget * this.headShare));
    while (headEnd > 0 && isContinuation(head[headEnd])) headEnd--;
    const tailWant = Math.min(tailAll.length, budget - headEnd);
    let tailStart = tailAll.length - tailWant;
    while (tailStart < tailAll.length && isContinuation(tailAll[tailStart])) tailStart++;
    const kept = headEnd + (tailAll.length - tailStart);
    const omitted = this.#total - kept;
    const text =
      decoder.decode(head.subarray(0, headEnd)) +
      truncationMarker(omitted) +
      decoder.decode(tailAll.subarray(tailStart));
    return { text, truncated: true, omittedBytes: omitted };
  }
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The last `lines` lines of `text` (a trailing newline does not count as an empty line). */
export function tailLines(text: string, lines: number): string {
  if (lines <= 0) return "";
  let end = text.length;
  if (text.endsWith("\n")) end--;
  let at = end;
  for (let n = 0; n < lines; n++) {
    const nl = text.lastIndexOf("\n", at - 1);
    if (nl === -1) return text;
    at = nl;
  }
  return text.slice(at + 1);
}
