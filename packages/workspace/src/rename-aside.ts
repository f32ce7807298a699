import { randomBytes } from "node:crypto";
import { chmodSync, lstatSync, renameSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Rename what a command left at `path` to `<name>.capgate-disabled-<random>` beside it, so
 * nothing trusts it by its name and nothing is lost. The name is chosen only now, so a
 * command cannot have taken it in advance; when the directory's owner write bit was taken
 * (chmod 555 .), it is given back — the directory is the user's — and the rename tried again.
 * @returns the new name, or undefined when the rename could not be done.
 */
export function renameAside(path: string): string | undefined {
  const dir = dirname(path);
  const name = `${basename(path)}.capgate-disabled-${randomBytes(6).toString("hex")}`;
  const rename = (): boolean => {
    try {
      renameSync(path, join(dir, name));
      return true;
    } catch {
      return false;
    }
  };
  if (rename()) return name;
  try {
    chmodSync(dir, lstatSync(dir).mode | 0o200);
  } catch {
    return undefined; // not ours to change
  }
  return rename() ? name : undefined;
}
