import { readlinkSync } from "node:fs";

/**
 * Whether an open file is the one at `expected` (an absolute real path the path guard
 * approved), by the kernel's own account of where the open landed (Linux:
 * `/proc/self/fd/N`). The guard checks a path, then the tool opens it by name; a directory
 * on the way swapped for a symbolic link in between (something running in the workspace can
 * do that in a loop) would make the open land elsewhere — outside the workspace or under
 * ~/.ssh. This check is on the opened file itself, so whatever the path did meanwhile,
 * only the file the guard approved is read. Returns why the file must not be read, or
 * undefined when it may — undefined too where the kernel does not say (no /proc: other
 * systems, where the race stays open; docs/security.md).
 */
export function openedFileRefusal(fd: number, expected: string): string | undefined {
  if (process.platform !== "linux") return undefined;
  let where: string;
  try {
    where = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined; // no /proc mounted: nothing to ask
  }
  if (where === expected) return undefined;
  // Unlinked since it was opened, or reached another way: not the file that was checked.
  return where.endsWith(" (deleted)")
    ? "it was removed while it was being opened"
    : "a directory on its path changed while it was being opened";
}
