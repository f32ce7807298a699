import type { FileHandle } from "node:fs/promises";
import type { ToolContext, ToolLimits, ToolResult } from "@capgate/tools";
import { openRegularFile } from "@capgate/workspace";
import { failure, formatBytes, isNotRegularFile, resolvePath, withExisting } from "./paths.js";
import { decodeUtf8, looksBinary } from "./text-file.js";

export const DEFAULT_READ_LIMIT = 2000;
/** Above this size fs.read stops after the page instead of counting every line. */
export const COUNT_LINES_UP_TO_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
/** Room kept for the header and footer lines inside the host's output cap. */
const FRAME_BYTES = 512;

export interface ReadArgs {
  path: string;
  offset?: number;
  limit?: number;
}

/** Data returned with every successful page. */
export interface ReadPage {
  path: string;
  /** First and last line shown (1-based); 0 and 0 for an empty file. */
  startLine: number;
  endLine: number;
  /** Lines in the file, or null when the file is too large to count them all. */
  totalLines: number | null;
  /** `offset` of the next page, or null when this page reaches the end. */
  nextOffset: number | null;
  /** The lines, joined with "\n" (CR of CRLF files removed), exactly as fs.patch expects them. */
  content: string;
  bytes: number;
  crlf: boolean;
  /** Set when one line was longer than the page budget and only its head is shown. */
  cutLine?: { line: number; bytes: number; shownBytes: number };
}

/**
 * The bytes one page may hold: the host's read limit, but never more than fits the output
 * cap, or the executor would cut the middle out of the page.
 */
export function pageBudget(limits: ToolLimits): number {
  return Math.max(1024, Math.min(limits.readBytes, limits.outputBytes - FRAME_BYTES));
}

export async function readFile(args: ReadArgs, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path, async () => {
    const { abs, rel } = await resolvePath(ctx, args.path);
    let opened: Awaited<ReturnType<typeof openRegularFile>>;
    try {
      opened = await openRegularFile(abs, { shown: rel, guarded: true });
    } catch (error) {
      if (!isNotRegularFile(error)) throw error;
      if (error.fileType === "directory") {
        return failure(`${rel} is a directory; use fs.list to see what it contains.`);
      }
      return failure(`${error.message} fs.read reads regular files only; nothing was read.`, {
        path: rel,
        type: error.fileType,
      });
    }
    const { handle, stats: info } = opened;
    const offset = args.offset ?? 1;
    const limit = args.limit ?? DEFAULT_READ_LIMIT;
    let scan: Scan;
    try {
      scan = await scanHandle(handle, offset, limit, pageBudget(ctx.limits), info.size, ctx.signal);
    } finally {
      await handle.close();
    }
    if (scan.binary) {
      return failure(
        `${rel} is a binary file (${formatBytes(info.size)}; it contains NUL bytes), so fs.read will not show it. Use fs.stat for its size, or code.run to inspect it.`,
        { path: rel, binary: true, bytes: info.size },
      );
    }
    if (info.size === 0) {
      const page: ReadPage = emptyPage(rel);
      return { success: true, summary: `${rel} is empty (0 bytes).`, data: page };
    }
    if (scan.lines.length === 0) {
      return failure(
        `offset ${offset} is past the end of ${rel}, which has ${scan.totalLines} line${scan.totalLines === 1 ? "" : "s"}; the last page starts at offset ${Math.max(1, (scan.totalLines ?? 1) - limit + 1)}.`,
        { path: rel, totalLines: scan.totalLines },
      );
    }
    const page = toPage(rel, offset, scan);
    return { success: true, summary: render(page), data: page };
  });
}

function emptyPage(rel: string): ReadPage {
  return {
    path: rel,
    startLine: 0,
    endLine: 0,
    totalLines: 0,
    nextOffset: null,
    content: "",
    bytes: 0,
    crlf: false,
  };
}

function toPage(rel: string, offset: number, scan: Scan): ReadPage {
  const content = scan.lines.join("\n");
  const page: ReadPage = {
    path: rel,
    startLine: offset,
    endLine: offset + scan.lines.length - 1,
    totalLines: scan.totalLines,
    nextOffset: scan.more ? offset + scan.lines.length : null,
    content,
    bytes: Buffer.byteLength(content),
    crlf: scan.crlf,
  };
  if (scan.cutLine) page.cutLine = scan.cutLine;
  return page;
}

function render(page: ReadPage): string {
  const of = page.totalLines === null ? "of a large file (lines not counted)" : `of ${page.totalLines}`;
  const notes = page.crlf ? " (CRLF line endings, shown without CR; fs.patch matches either)" : "";
  const header = `${page.path} — lines ${page.startLine}–${page.endLine} ${of}${notes}`;
  const footer: string[] = [];
  if (page.cutLine) {
    footer.push(
      `[line ${page.cutLine.line} is ${formatBytes(page.cutLine.bytes)}; only its first ${formatBytes(page.cutLine.shownBytes)} are shown]`,
    );
  }
  if (page.nextOffset !== null) {
    const left =
      page.totalLines === null ? "more lines follow" : `${page.totalLines - page.endLine} more lines`;
    footer.push(
      `[${left}; next page: fs.read {"path":${JSON.stringify(page.path)},"offset":${page.nextOffset}}]`,
    );
  }
  return [header, page.content, ...footer].join("\n");
}

interface Scan {
  binary: boolean;
  lines: string[];
  totalLines: number | null;
  more: boolean;
  crlf: boolean;
  cutLine?: { line: number; bytes: number; shownBytes: number };
}

/**
 * One pass over the file in 64 KB chunks: keep the lines of the page (each stored only up
 * to the bytes still free in the budget, so a 1 GB single-line file costs one budget of
 * memory) and count newlines for the total, stopping after the page for very large files.
 */
async function scanHandle(
  handle: FileHandle,
  offset: number,
  limit: number,
  budget: number,
  size: number,
  signal: AbortSignal,
): Promise<Scan> {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  const countAll = size <= COUNT_LINES_UP_TO_BYTES;
  const lines: string[] = [];
  let crlf = false;
  let cutLine: Scan["cutLine"];
  let line = 1; // the line the next byte belongs to
  let lineBytes = 0; // bytes of that line so far
  let parts: Buffer[] = []; // its stored bytes, when it belongs to the page
  let stored = 0;
  let used = 0;
  let pageDone = false;
  let pageEnd = 0; // file position just after the last line of the page
  let position = 0;

  const finishLine = (endPosition: number) => {
    if (pageDone || line < offset) return;
    const raw = Buffer.concat(parts, stored);
    let shown = lineBytes;
    let text: string;
    if (lineBytes > 0 && raw[stored - 1] === 13 && stored === lineBytes) {
      crlf = true;
      shown--;
      text = decodeUtf8(raw.subarray(0, stored - 1));
    } else text = decodeUtf8(raw);
    if (used + shown + 1 > budget && lines.length > 0) {
      pageDone = true; // this line starts the next page
      return;
    }
    if (shown > budget) {
      const head = utf8Head(raw, budget);
      cutLine = { line, bytes: shown, shownBytes: head.length };
      text = decodeUtf8(head);
    }
    lines.push(text);
    used += Math.min(shown, budget) + 1;
    pageEnd = endPosition;
    if (cutLine || lines.length >= limit) pageDone = true;
  };

  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    if (position === 0 && looksBinary(chunk))
      return { binary: true, lines: [], totalLines: null, more: false, crlf };
    let start = 0;
    while (start < bytesRead) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? bytesRead : nl;
      if (!pageDone && line >= offset) {
        const room = budget - used + 2 - stored; // enough to know it does not fit, plus a CR
        if (room > 0) {
          const piece = Buffer.from(chunk.subarray(start, Math.min(end, start + room)));
          parts.push(piece);
          stored += piece.length;
        }
      }
      lineBytes += end - start;
      if (nl === -1) break;
      finishLine(position + nl + 1);
      line++;
      lineBytes = 0;
      parts = [];
      stored = 0;
      start = nl + 1;
    }
    position += bytesRead;
    if (signal.aborted) throw new Error("fs.read was aborted");
    if (pageDone && !countAll) break;
  }
  if (lineBytes > 0) {
    finishLine(position);
    line++;
  }
  // Without countAll the scan stops after the page, but a page that never started read it all.
  const totalLines = countAll || !pageDone ? line - 1 : null;
  const more = lines.length > 0 && pageEnd < size;
  const scan: Scan = { binary: false, lines, totalLines, more, crlf };
  if (cutLine) scan.cutLine = cutLine;
  return scan;
}

/** The first at most `max` bytes of `bytes`, cut on a UTF-8 character boundary. */
function utf8Head(bytes: Buffer, max: number): Buffer {
  let end = Math.min(max, bytes.length);
  while (end > 0 && end < bytes.length && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}
