import { readFileSync } from "node:fs";
import { posix } from "node:path";
import { isInside } from "@capgate/workspace";

/** Where a path lives, whatever it is mounted as: its file system (major:minor) and its path inside it. */
export interface MountSource {
  device: string;
  inner: string;
}

export interface MountEntry {
  id: string;
  parent: string;
  device: string;
  root: string;
  mountPoint: string;
}

/** `\040` and the other octal escapes of /proc/self/mountinfo. */
const unescapeField = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/**
 * The mounts in force in this process's mount table (/proc/self/mountinfo, or `text` in its
 * format; `topMounts` of it), or undefined where there is none (not Linux).
 */
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
    out.push({
      id: fields[0]!,
      parent: fields[1]!,
      device: fields[2]!,
      root: unescapeField(fields[3]!),
      mountPoint: unescapeField(fields[4]!),
    });
  }
  return topMounts(out);
}

/**
 * The mounts in force: of several on one mount point, the one on top — the one no other
 * mount on that point was mounted over (its parent is the mount below it). The table's order
 * does not tell: since Linux 6.8 it is by mount id, and a mount moved over another keeps its
 * older id.
 */
export function topMounts(table: readonly MountEntry[]): MountEntry[] {
  const byPoint = new Map<string, MountEntry[]>();
  for (const m of table) {
    const list = byPoint.get(m.mountPoint);
    if (list) list.push(m);
    else byPoint.set(m.mountPoint, [m]);
  }
  const out: MountEntry[] = [];
  for (const list of byPoint.values()) {
    const covered = new Set(list.map((m) => m.parent));
    out.push(list.find((m) => !covered.has(m.id)) ?? list[list.length - 1]!);
  }
  return out;
}

/**
 * The file system and inner path of `real` (an absolute real path), through the mount in
 * force (`table`: `readMountTable`'s) whose mount point holds it most closely. A bind mount shows a directory under a
 * second name; two names of one directory have the same source, so the mount table, not the
 * path, tells whether one lies in the other.
 */
export function mountSource(real: string, table: readonly MountEntry[]): MountSource | undefined {
  let best: MountEntry | undefined;
  for (const m of table) {
    if (!isInside(m.mountPoint, real)) continue;
    if (!best || m.mountPoint.length > best.mountPoint.length) best = m;
  }
  if (!best) return undefined;
  const rest = posix.relative(best.mountPoint, real);
  return { device: best.device, inner: posix.join(best.root, rest) };
}

/** The mounts in force (`table`: `readMountTable`'s) strictly below `dir` (a real path), each with what it shows. */
export function mountsBelow(
  dir: string,
  table: readonly MountEntry[],
): Array<{ at: string; source: MountSource }> {
  return table
    .filter((m) => m.mountPoint !== dir && isInside(dir, m.mountPoint))
    .map((m) => ({ at: m.mountPoint, source: { device: m.device, inner: m.root } }));
}

/** Whether `inner` lies at or below `outer`, both sources (same file system, inner path within). */
export function sourceWithin(outer: MountSource, inner: MountSource): boolean {
  return outer.device === inner.device && isInside(outer.inner, inner.inner);
}
