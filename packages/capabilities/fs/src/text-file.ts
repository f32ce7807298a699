import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { PolicyDeniedError } from "@capgate/tools";
import { openedFileRefusal, openRegularFile, withPinnedDirectory } from "@capgate/workspace";

/** Create a new file, never through a link at its name. */
const OPEN_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** How many leading bytes are inspected for NUL bytes (git's heuristic uses the same 8000). */
export const BINARY_SNIFF_BYTES = 8000;

/** Largest file fs.patch loads into memory. */
export const MAX_PATCH_FILE_BYTES = 16 * 1024 * 1024;

const decoder = new TextDecoder("utf-8");

/** A NUL byte in the first 8000 bytes means binary (the git heuristic; UTF-16 text counts as binary too). */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Lines as an editor counts them: "a\nb\n" and "a\nb" both have 2, "" has 0. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** 1-based line number of the character at `index`. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

export type TextFile =
  | { kind: "text"; text: string; bytes: number; mode: number }
  | { kind: "binary"; bytes: number }
  | { kind: "too_large"; bytes: number };

/**
 * Load a whole text file (for fs.patch), refusing binary and oversized files before
 * decoding. Opened with `openRegularFile`, so a FIFO, socket or device is refused
 * (NotRegularFileError) instead of blocking a thread of the shared I/O pool.
 */
export async function loadTextFile(abs: string, maxBytes: number, shown?: string): Promise<TextFile> {
  const { handle, stats: info } = await openRegularFile(abs, {
    guarded: true,
    ...(shown === undefined ? {} : { shown }),
  });
  try {
    if (info.size > maxBytes) return { kind: "too_large", bytes: info.size };
    const bytes = await handle.readFile();
    if (looksBinary(bytes)) return { kind: "binary", bytes: bytes.length };
    return { kind: "text", text: decodeUtf8(bytes), bytes: bytes.length, mode: info.mode & 0o7777 };
  } finally {
    await handle.close();
  }
}

/**
 * Replace `abs` atomically: write a temporary file in the same directory, flush it, then
 * rename it over the target. A reader sees the old or the new content, never half; a crash
 * leaves the old file. Because the directory entry is replaced (not the inode rewritten), a
 * hard link elsewhere keeps the old content. `mode` keeps an existing file's permissions.
 */
export async function writeAtomic(abs: string, content: string | Uint8Array, mode?: number): Promise<number> {
  const name = basename(abs);
  const tempName = `.${name.slice(0, 200)}.${randomBytes(6).toString("hex")}.capgate-tmp`;
  // The temporary file is made, renamed and (on failure) removed in the directory held
  // open, never by a path a swapped directory could lead elsewhere.
  return withPinnedDirectory(dirname(abs), async (dir) => {
    const temp = join(dirname(abs), tempName);
    const handle = await open(dir.at(tempName), OPEN_NEW, mode ?? 0o666);
    let renamed = false;
    try {
      // Created where the guard approved: checked on the file itself before any content is
      // written to it (the descriptor check answers where there is no /proc too, by path).
      const misplaced = openedFileRefusal(handle.fd, temp);
      if (misplaced)
        throw new PolicyDeniedError(`${name} was not written: ${misplaced}. Nothing was written; try again.`);
      await handle.writeFile(content);
      // The umask applied at creation; restore the original file's exact mode.
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
      const size = (await handle.stat()).size;
      await rename(dir.at(tempName), dir.at(name));
      renamed = true;
      // Still open: where the rename put it, by the kernel's account.
      const moved = openedFileRefusal(handle.fd, abs);
      if (moved)
        throw new PolicyDeniedError(
          `${name} may not be where it was meant to be: ${moved}. Check the file and try again.`,
        );
      return size;
    } finally {
      await handle.close();
      if (!renamed) await unlink(dir.at(tempName)).catch(() => undefined);
    }
  });
}
