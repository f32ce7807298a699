import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { CapgateError } from "@capgate/schema";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { describeFileType, openedFileRefusal } from "@capgate/workspace";
import { failure, formatBytes, withExisting } from "./paths.js";
import { RegexSandbox } from "./regex-sandbox.js";
import { compileGlob, relativeTo, resolveScope } from "./scope.js";
import { decodeUtf8, looksBinary } from "./text-file.js";
import { type WalkedFile, walkFiles } from "./walk.js";

export interface SearchArgs {
  pattern: string;
  path?: string;
  glob?: string;
  max_results?: number;
}

export const DEFAULT_MAX_RESULTS = 100;
/** Files larger than this are skipped (and named): generated bundles, logs, data. */
export const MAX_SEARCH_FILE_BYTES = 4 * 1024 * 1024;
/** Longest line text shown per match; longer lines show a window around the match. */
const SHOWN_LINE_CHARS = 240;
/** Batch size for the regex sandbox. */
const BATCH_CHARS = 1024 * 1024;
const BATCH_FILES = 128;
/** Files read (synchronously) between two turns of the event loop. */
const YIELD_EVERY_FILES = 32;
/** Regex time budget for one search, at most (the host's timeout may make it smaller). */
const MAX_REGEX_MS = 20_000;

export interface SearchMatch {
  path: string;
  line: number;
  column: number;
  text: string;
}

/**
 * fs.search: lines matching a JavaScript RegExp in the files under `path` (or `path`
 * itself), printed as `path:line: text`. Files come from the same walk as fs.glob
 * (.gitignore respected, node_modules/.git skipped, symlinks not followed); binary files
 * and files over 4 MB are skipped and counted. The regex runs in a worker thread under a
 * time budget (regex-sandbox.ts), so a catastrophic pattern ends the search with a clear
 * message, and never blocks the host's event loop while it runs.
 */
export async function searchFiles(args: SearchArgs, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path ?? ".", async () => {
    const scope = await resolveScope(ctx, args.path);
    if (scope.isFile && scope.type !== "file") {
      return failure(
        `${scope.startRel} is ${describeFileType(scope.type)}, not a regular file or directory; fs.search reads regular files only (a pipe, socket or device is never opened).`,
        { path: scope.startRel, type: scope.type },
      );
    }
    const max = args.max_results ?? DEFAULT_MAX_RESULTS;
    const globMatch = args.glob === undefined ? undefined : compileGlob(args.glob, "glob");
    const sandbox = new RegexSandbox(args.pattern, Math.min(MAX_REGEX_MS, ctx.limits.timeoutMs - 1000));
    const budget = ctx.limits.outputBytes - 1024;

    const files: AsyncIterable<WalkedFile> | WalkedFile[] = scope.isFile
      ? [{ abs: scope.start, rel: scope.startRel }]
      : walkFiles({
          root: scope.root,
          start: scope.start,
          rules: scope.rules,
          signal: ctx.signal,
          hidden: scope.hidden,
        });
    const matches: SearchMatch[] = [];
    const tooLarge: string[] = [];
    let searched = 0;
    let binary = 0;
    let timedOut = false;
    let full = false;
    let batch: { rel: string; text: string }[] = [];
    let batchChars = 0;

    const flush = async () => {
      const result = await sandbox.match(
        batch.map((b) => b.text),
        max - matches.length,
        ctx.signal,
      );
      for (const [t, line, column, content] of result.matches) {
        matches.push({ path: batch[t]!.rel, line, column, text: content });
      }
      if (result.timedOut) timedOut = true;
      if (matches.length >= max) full = true;
      batch = [];
      batchChars = 0;
    };

    const take = async (file: WalkedFile, loaded: Loaded) => {
      if (loaded.kind === "too_large") tooLarge.push(`${file.rel} (${formatBytes(loaded.bytes)})`);
      else if (loaded.kind === "binary") binary++;
      else if (loaded.kind === "text") {
        searched++;
        batch.push({ rel: file.rel, text: loaded.text });
        batchChars += loaded.text.length;
        if (batchChars >= BATCH_CHARS || batch.length >= BATCH_FILES) await flush();
      }
    };
    let sinceYield = 0;
    try {
      for await (const file of files) {
        if (ctx.signal.aborted || timedOut || full) break;
        if (globMatch && !scope.isFile && !matchesGlob(globMatch, scope.startRel, file.rel)) continue;
        await take(file, loadForSearch(file.abs));
        // Reads are synchronous (8x faster than fs.promises here, see docs); let timers and aborts in.
        if (++sinceYield >= YIELD_EVERY_FILES) {
          sinceYield = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      if (batch.length > 0 && !ctx.signal.aborted && !timedOut && !full) await flush();
    } catch (error) {
      if (CapgateError.isInstance(error) && error.code === "search_failed") {
        return failure(`fs.search stopped: ${error.message} Simplify the pattern.`, {
          pattern: args.pattern,
          code: "search_failed",
        });
      }
      throw error;
    } finally {
      sandbox.close();
    }
    if (ctx.signal.aborted) return { success: false, summary: "fs.search was aborted." };

    const where = scope.startRel === "." ? "the workspace" : scope.startRel;
    const lines: string[] = [];
    let used = 0;
    let shown = 0;
    for (const m of matches) {
      const line = `${m.path}:${m.line}: ${window(m.text, m.column)}`;
      used += Buffer.byteLength(line) + 1;
      if (used > budget) break;
      lines.push(line);
      shown++;
    }
    const fileCount = new Set(matches.map((m) => m.path)).size;
    const head =
      matches.length === 0
        ? `No matches for /${args.pattern}/ in ${where} (${searched} file${searched === 1 ? "" : "s"} searched).`
        : `${matches.length}${full ? "+" : ""} match${matches.length === 1 ? "" : "es"} for /${args.pattern}/ in ${fileCount} file${fileCount === 1 ? "" : "s"} under ${where} (${searched} searched):`;
    const notes: string[] = [];
    if (full) notes.push(`[stopped at max_results=${max}; narrow the pattern, path or glob to see the rest]`);
    if (shown < matches.length)
      notes.push(`[${matches.length - shown} more matches not shown: output limit]`);
    if (scope.startIgnored)
      notes.push(`[${scope.startRel} is gitignored, so .gitignore was not applied inside it]`);
    if (binary > 0) notes.push(`[${binary} binary file${binary === 1 ? "" : "s"} skipped]`);
    if (tooLarge.length > 0) {
      notes.push(
        `[skipped, larger than ${formatBytes(MAX_SEARCH_FILE_BYTES)}: ${tooLarge.slice(0, 5).join(", ")}${tooLarge.length > 5 ? ", …" : ""}]`,
      );
    }
    if (timedOut) {
      notes.push(
        "[the pattern ran out of its time budget, probably from catastrophic backtracking such as (a+)+; the search stopped early. Simplify the pattern.]",
      );
    }
    return {
      success: !timedOut,
      summary: [head, ...lines, ...notes].join("\n"),
      data: {
        pattern: args.pattern,
        matches,
        filesSearched: searched,
        truncated: full,
        timedOut,
        skipped: { binary, tooLarge: tooLarge.length },
      },
    };
  });
}

/** The glob is tried against the path relative to `path` and relative to the workspace root. */
function matchesGlob(match: (p: string) => boolean, startRel: string, rel: string): boolean {
  return match(relativeTo(startRel, rel)) || match(rel);
}

type Loaded =
  | { kind: "text"; text: string }
  | { kind: "binary" }
  | { kind: "too_large"; bytes: number }
  | { kind: "unreadable" };

/**
 * One small file, read synchronously: a search reads thousands of files, and each
 * fs.promises round trip (open, fstat, read, close through the thread pool) costs ~8x more
 * than the read itself. Files over the size limit are not read at all.
 */
function loadForSearch(abs: string): Loaded {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO swapped in after the walk must not block the thread; O_NOFOLLOW: nor a link.
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return { kind: "unreadable" };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { kind: "unreadable" };
    // Not the file the walk found (a directory on its path was swapped for a link): skipped.
    if (openedFileRefusal(fd, abs)) return { kind: "unreadable" };
    const size = info.size;
    if (size > MAX_SEARCH_FILE_BYTES) return { kind: "too_large", bytes: size };
    const bytes = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const n = readSync(fd, bytes, filled, size - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    const content = bytes.subarray(0, filled);
    if (looksBinary(content)) return { kind: "binary" };
    return { kind: "text", text: decodeUtf8(content) };
  } catch {
    return { kind: "unreadable" };
  } finally {
    closeSync(fd);
  }
}

/** A line as shown: whole when short, else a window around the match marked with "…". */
function window(text: string, column: number): string {
  if (text.length <= SHOWN_LINE_CHARS) return text;
  const start = Math.max(0, Math.min(column - 60, text.length - SHOWN_LINE_CHARS));
  const end = start + SHOWN_LINE_CHARS;
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}
