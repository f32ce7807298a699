import { lstatSync, realpathSync, type Stats } from "node:fs";

/** `lstat` of `path`, or undefined when it cannot be read (missing, no permission). */
export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * The real path of `path`, or undefined when it does not resolve. One lstat first: most
 * paths asked about are not there, and a missing one then costs no thrown error.
 */
export function realOrUndefined(path: string): string | undefined {
  try {
    if (!lstatSync(path, { throwIfNoEntry: false })) return undefined;
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}
