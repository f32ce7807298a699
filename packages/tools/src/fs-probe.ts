import { lstatSync, realpathSync, type Stats } from "node:fs";

/** `lstat` of `path`, or undefined when it cannot be read (missing, no permission). */
export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** The real path of `path`, or undefined when it does not resolve. */
export function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
