import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { CapgateError } from "@capgate/schema";
import { PolicyDeniedError } from "@capgate/tools";
import { openedFileRefusal } from "./opened-file.js";

export type FileType =
  | "file"
  | "directory"
  | "symlink"
  | "fifo"
  | "socket"
  | "character-device"
  | "block-device"
  | "unknown";

/** The kind of file `info` describes (from lstat or fstat). */
export function fileTypeOf(info: Stats): FileType {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "directory";
  if (info.isSymbolicLink()) return "symlink";
  if (info.isFIFO()) return "fifo";
  if (info.isSocket()) return "socket";
  if (info.isCharacterDevice()) return "character-device";
  if (info.isBlockDevice()) return "block-device";
  return "unknown";
}

const DESCRIPTIONS: Record<FileType, string> = {
  file: "a regular file",
  directory: "a directory",
  symlink: "a symbolic link",
  fifo: "a named pipe (FIFO)",
  socket: "a socket",
  "character-device": "a character device",
  "block-device": "a block device",
  unknown: "a special file",
};

/** "a named pipe (FIFO)", "a socket", … for messages. */
export function describeFileType(type: FileType): string {
  return DESCRIPTIONS[type];
}

/** The path is not a regular file (code `not_a_regular_file`); `fileType` says what it is. */
export class NotRegularFileError extends CapgateError {
  readonly fileType: FileType;
  constructor(shown: string, type: FileType, property: string) {
    super(
      "not_a_regular_file",
      `${shown} is ${describeFileType(type)}, not a regular file; only regular files are opened${type === "directory" ? " (use fs.list for a directory)" : " (reading a pipe, socket or device could block or never end)"}.`,
      { property },
    );
    this.name = "NotRegularFileError";
    this.fileType = type;
  }
}

export interface OpenRegularFileOptions {
  /** Shown in errors instead of the absolute path (e.g. the workspace-relative path). */
  shown?: string;
  /** The tool argument the path came from (default "path"). */
  property?: string;
  /**
   * `abs` is the real path the path guard approved: the opened file must be the one there
   * (`openedFileRefusal`), or it is closed and refused with `policy_denied`.
   */
  guarded?: boolean;
}

/**
 * Open `abs` for reading only if it is a regular file, by construction: the open itself
 * uses O_NONBLOCK (a FIFO without a writer opens at once instead of parking a thread of
 * the shared libuv pool forever) and O_NOFOLLOW (a symlink swapped in after the path was
 * checked fails instead of being followed), then the *handle* is fstat-ed and anything but
 * a regular file is closed and refused. With `guarded`, the handle must also be the file at
 * `abs` by the kernel's account (a directory swapped for a link mid-way is caught). Read
 * only from the returned handle. On a regular file O_NONBLOCK changes nothing.
 * @throws NotRegularFileError for directories, FIFOs, sockets and devices; the open's own error otherwise.
 */
export async function openRegularFile(
  abs: string,
  options: OpenRegularFileOptions = {},
): Promise<{ handle: FileHandle; stats: Stats }> {
  const shown = options.shown ?? abs;
  const property = options.property ?? "path";
  // Refuse what is visibly special before opening it at all (opening a device can act).
  const before = await lstat(abs);
  if (!before.isFile()) throw new NotRegularFileError(shown, fileTypeOf(before), property);
  let handle: FileHandle;
  try {
    handle = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A socket cannot be opened (ENXIO); a link swapped in is ELOOP. Say what is there instead.
    if (code === "ENXIO" || code === "ELOOP" || code === "EOPNOTSUPP") {
      const info = await lstat(abs).catch(() => undefined);
      if (info) throw new NotRegularFileError(shown, fileTypeOf(info), property);
    }
    throw error;
  }
  let stats: Stats;
  try {
    stats = await handle.stat();
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (!stats.isFile()) {
    await handle.close();
    throw new NotRegularFileError(shown, fileTypeOf(stats), property);
  }
  const refusal = options.guarded ? openedFileRefusal(handle.fd, abs) : undefined;
  if (refusal) {
    await handle.close();
    throw new PolicyDeniedError(`${shown} was not read: ${refusal}. Nothing was read; try again.`, {
      property,
    });
  }
  return { handle, stats };
}
