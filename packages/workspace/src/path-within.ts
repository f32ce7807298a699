import { sep } from "node:path";

/** Whether `candidate` is `root` or lies under it (both absolute and normalised; no lookup). */
export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return candidate.startsWith(prefix);
}
