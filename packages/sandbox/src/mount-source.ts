import { readFileSync } from "node:fs";
import { posix } from "node:path";

/** Where a path lives, whatever it is mounted as: its file system (major:minor) and its path inside it. */
export interface MountSource {
  device: string;
  inner: string;
}

interface MountEntry {
  device: string;
  root: string;
  mountPoint: string;
}

/** `\040` and the other octal escapes of /proc/self/mountinfo. */
const unescapeField = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/** This process's mount table (/proc/self/mountinfo), or undefined where there is none (not Linux). */
export function readMountTable(text?: string): MountEntry[] | undefined {
  let content = text;
  if (content === undefined) {
    try {
      content = readFileSync("/proc/self/mountinfo", "utf8");
    } catch {
      return undefined;
    }
  }
  const out: MountEntry[] = [];
  for (const line of content.split("\n")) {
    // id parent major:minor root mount-point options [optional fields…] - type source super-options
    const fields = line.split(" ");
    if (fields.length < 5) continue;
    out.push({ device: fields[2]!, root: unescapeField(fields[3]!), mountPoint: unescapeField(fields[4]!) });
  }
  return out;
}

const within = (dir: string, path: string): boolean =>
  path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);

/**
 * The file system and inner path of `real` (an absolute real path): through the mount whose
 * mount point holds it most closely (the last such in the table, which is the one on top). A
 * bind mount shows a directory under a second name; two names of one directory have the same
 * source, so the mount table, not the path, tells whether one lies in the other.
 */
export function mountSource(real: string, table: readonly MountEntry[]): MountSource | undefined {
  let best: MountEntry | undefined;
  for (const m of table) {
    if (!within(m.mountPoint, real)) continue;
    if (!best || m.mountPoint.length >= best.mountPoint.length) best = m;
  }
  if (!best) return undefined;
  const rest = posix.relative(best.mountPoint, real);
  return { device: best.device, inner: posix.join(best.root, rest) };
}

/** Whether `inner` lies at or below `outer`, both sources (same file system, inner path within). */
export function sourceWithin(outer: MountSource, inner: MountSource): boolean {
  return outer.device === inner.device && within(outer.inner, inner.inner);
}
