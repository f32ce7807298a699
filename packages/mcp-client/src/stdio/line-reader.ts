/** What is kept of a line that exceeded the limit: its size and both ends. */
export interface OversizedLine {
  bytes: number;
  head: string;
  tail: string;
}

const EDGE = 256;

/**
 * Splits a byte stream into newline-terminated lines without re-scanning or re-copying the
 * buffered part (the SDK's ReadBuffer concatenates every chunk). A line longer than
 * `maxLineBytes` is dropped while it streams by — only its size and its first and last
 * 256 bytes are kept — so a flood cannot exhaust memory or end the session.
 */
export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private discarding = false;
  private discarded = 0;
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversized: (line: OversizedLine) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.append(chunk.subarray(start, end));
      if (newline === -1) return;
      this.finishLine();
      start = newline + 1;
    }
  }

  private append(piece: Buffer): void {
    if (this.discarding) {
      this.discarded += piece.length;
      if (this.head.length < EDGE)
        this.head = Buffer.concat([this.head, piece.subarray(0, EDGE - this.head.length)]);
      this.keepTail(piece);
      return;
    }
    if (this.size + piece.length <= this.maxLineBytes) {
      this.chunks.push(piece);
      this.size += piece.length;
      return;
    }
    const sofar = Buffer.concat([...this.chunks, piece]);
    this.head = Buffer.from(sofar.subarray(0, EDGE));
    this.tail = Buffer.alloc(0);
    this.keepTail(sofar);
    this.discarded = sofar.length;
    this.discarding = true;
    this.chunks = [];
    this.size = 0;
  }

  private keepTail(piece: Buffer): void {
    const joined = this.tail.length === 0 ? piece : Buffer.concat([this.tail, piece]);
    this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - EDGE)));
  }

  private finishLine(): void {
    if (this.discarding) {
      const info = {
        bytes: this.discarded,
        head: this.head.toString("utf8"),
        tail: this.tail.toString("utf8"),
      };
      this.discarding = false;
      this.discarded = 0;
      this.head = Buffer.alloc(0);
      this.tail = Buffer.alloc(0);
      this.onOversized(info);
      return;
    }
    const line =
      this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    this.onLine(line);
  }
}
