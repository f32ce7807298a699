/**
 * A path read as a script: is it standard input or a descriptor in disguise? Absolute paths
 * under /dev or /proc (except /dev/null), after collapsing `//`, `/./` and `..`, and relative
 * ones that climb (`../../dev/stdin`) into a dev/ or proc/ directory.
 */
export function isDescriptorPath(path: string): boolean {
  const parts: string[] = [];
  let climbs = 0;
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length > 0) parts.pop();
      else climbs++;
      continue;
    }
    parts.push(part);
  }
  const joined = parts.join("/");
  if (path.startsWith("/") || climbs > 0) {
    if (joined === "dev/null") return false;
    return /^(dev|proc)(\/|$)/.test(joined);
  }
  return false;
}
