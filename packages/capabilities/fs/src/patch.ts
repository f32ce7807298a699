import { lstat } from "node:fs/promises";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { failure, formatBytes, isNotRegularFile, resolvePath, withExisting } from "./paths.js";
import { countLines, lineAt, loadTextFile, MAX_PATCH_FILE_BYTES, writeAtomic } from "./text-file.js";

export interface PatchArgs {
  path: string;
  old: string;
  new: string;
}

/** Occurrence positions listed in a failure. */
const SHOWN_OCCURRENCES = 20;
/** The whitespace-insensitive hint is only computed for inputs this small (it is a regex search). */
const HINT_MAX_OLD_CHARS = 2000;
const HINT_MAX_FILE_CHARS = 2 * 1024 * 1024;

/**
 * fs.patch: replace the one occurrence of `old` with `new`, literally. Occurrences are
 * counted overlapping ("aa" occurs twice in "aaa"), so "exactly once" has one meaning. On
 * any failure the file is not written at all; on success it is replaced atomically.
 */
export async function patchFile(args: PatchArgs, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path, async () => {
    const { abs, rel } = await resolvePath(ctx, args.path, { forWrite: true });
    const info = await lstat(abs);
    if (info.isDirectory()) return failure(`${rel} is a directory; fs.patch edits files.`);
    let file: Awaited<ReturnType<typeof loadTextFile>>;
    try {
      file = await loadTextFile(abs, MAX_PATCH_FILE_BYTES, rel);
    } catch (error) {
      if (!isNotRegularFile(error)) throw error;
      return failure(`${error.message} fs.patch edits regular files only; nothing was changed.`, {
        path: rel,
        type: error.fileType,
      });
    }
    if (file.kind === "binary")
      return failure(`${rel} is a binary file; fs.patch edits text. It is unchanged.`);
    if (file.kind === "too_large") {
      return failure(
        `${rel} is ${formatBytes(file.bytes)}; fs.patch edits files up to ${formatBytes(MAX_PATCH_FILE_BYTES)}. It is unchanged.`,
      );
    }
    if (args.old === args.new)
      return failure("`old` and `new` are identical, so there is nothing to change.");

    let old = args.old;
    let replacement = args.new;
    let found = occurrences(file.text, old);
    let crlf = false;
    // fs.read shows CRLF files without CR; accept `old` as shown and keep the file's line endings.
    if (found.count === 0 && old.includes("\n") && file.text.includes("\r\n")) {
      const crlfOld = toCrlf(old);
      const again = occurrences(file.text, crlfOld);
      if (again.count > 0) {
        found = again;
        old = crlfOld;
        replacement = toCrlf(replacement);
        crlf = true;
      }
    }

    if (found.count === 0) {
      const near = looseMatchLines(file.text, args.old);
      const hint =
        near.length > 0
          ? ` Text equal to it apart from whitespace is at line${near.length === 1 ? "" : "s"} ${near.join(", ")}: copy it exactly (fs.read shows the file as it is).`
          : " Read the file with fs.read and copy the exact text, whitespace included.";
      return failure(`\`old\` was not found in ${rel} (0 occurrences); the file is unchanged.${hint}`, {
        path: rel,
        occurrences: 0,
        similarAt: near,
      });
    }
    if (found.count > 1) {
      const lines = linesOf(file.text, found.positions);
      const more = found.count > lines.length ? ", …" : "";
      return failure(
        `\`old\` occurs ${found.count} times in ${rel} (lines ${lines.join(", ")}${more}); it must occur exactly once. Include more surrounding lines to make it unique; the file is unchanged.`,
        { path: rel, occurrences: found.count, lines },
      );
    }

    const at = found.positions[0]!;
    const next = file.text.slice(0, at) + replacement + file.text.slice(at + old.length);
    const bytes = await writeAtomic(abs, next, file.mode);
    const line = lineAt(file.text, at);
    const removed = countLines(old);
    const added = countLines(replacement);
    const total = countLines(next);
    return {
      success: true,
      summary: `Patched ${rel} at line ${line}: ${removed} line${removed === 1 ? "" : "s"} replaced by ${added}; the file now has ${total} line${total === 1 ? "" : "s"} (${bytes} bytes).`,
      data: { path: rel, line, removedLines: removed, addedLines: added, totalLines: total, bytes, crlf },
    };
  });
}

/** Every start position of `needle`, overlapping; only the first few positions are kept. */
export function occurrences(text: string, needle: string): { count: number; positions: number[] } {
  const positions: number[] = [];
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) {
    count++;
    if (positions.length < SHOWN_OCCURRENCES) positions.push(i);
  }
  return { count, positions };
}

/** 1-based line numbers of ascending positions, in one pass. */
function linesOf(text: string, positions: number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let from = 0;
  for (const p of positions) {
    for (let i = text.indexOf("\n", from); i !== -1 && i < p; i = text.indexOf("\n", i + 1)) {
      line++;
      from = i + 1;
    }
    lines.push(line);
  }
  return lines;
}

function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, () => "\r\n");
}

/**
 * Lines where `old` would match if whitespace were ignored (indentation, a missing space,
 * tabs for spaces) — the usual reason a copied snippet is "not found".
 */
function looseMatchLines(text: string, old: string): number[] {
  if (old.length > HINT_MAX_OLD_CHARS || text.length > HINT_MAX_FILE_CHARS) return [];
  const chars = [...old.replace(/\s+/g, "")];
  if (chars.length === 0) return [];
  // Literal characters with optional whitespace between them: no nested quantifiers, so no blow-up.
  const pattern = new RegExp(chars.map((c) => c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join("\\s*"), "g");
  const positions: number[] = [];
  for (const m of text.matchAll(pattern)) {
    positions.push(m.index);
    if (positions.length >= 3) break;
  }
  return linesOf(text, positions);
}
