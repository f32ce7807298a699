/**
 * A path read as a script: is it standard input or a descriptor in disguise? Absolute paths
 * under /dev or /proc (except /dev/null), after collapsing `//`, `/./` and `..`, and relative
 * ones that climb (`../../dev/stdin`) into a dev/ or proc/ directory. A `~` or `~user` start
 * is a directory of unknown depth: climbing out of it may reach `/` (`~root/../dev/stdin`).
 * A relative path ending in `stdin` or `fd/N`, or a bare number (`cd /dev/fd && python3 0`), is
 * one too: the policy does not follow `cd`.
 */
export function isDescriptorPath(path: string): boolean {
  const parts: string[] = [];
  let climbs = 0;
  const segments = path.split("/");
  // The home directory a leading `~…` names: popping it leaves somewhere unknown.
  const home = segments[0]?.startsWith("~") ? "\0home" : undefined;
  if (home) segments[0] = home;
  for (const part of segments) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length > 0) {
        if (parts.pop() === home) climbs++;
      } else climbs++;
      continue;
    }
    parts.push(part);
  }
  const joined = parts.join("/");
  if (path.startsWith("/") || climbs > 0) {
    if (joined === "dev/null") return false;
    return /^(dev|proc)(\/|$)/.test(joined);
  }
  // Relative to a directory the policy does not track (`cd /dev && python3 stdin`): the
  // names a descriptor has there.
  return /(^|\/)(stdin|fd\/\d+)$|^\d+$/.test(joined);
}
