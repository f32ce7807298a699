import type { Dirent } from "node:fs";
import { lstat, readdir, realpath, stat } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import { CapgateError } from "@capgate/schema";
import {
  describeFileType,
  fileTypeOf,
  isInside,
  openRegularFile,
  PROTECTED_GIT_ENTRIES,
  runProcess,
} from "@capgate/tools";

/**
 * What a git call may run with, once the repository's metadata has been checked: the
 * `.git` directory to pin GIT_DIR to, and `-c` overrides neutralising every program the
 * repository's own config names (filter, diff and merge drivers), plus the identity the
 * operator's global config would have given (global config itself is never read by git).
 */
export interface CheckedRepository {
  root: string;
  gitDir: string;
  /** `-c name=value` pairs, appended after the fixed hardening options. */
  overrides: string[];
  /** Lower-cased keys the repository's config sets (e.g. `user.name`). */
  keys: ReadonlySet<string>;
}

/** A repository whose metadata points git outside the workspace, or at programs it would run. */
export class UnsafeRepositoryError extends CapgateError {
  constructor(message: string, options: { property?: string } = {}) {
    super("unsafe_repository", message, { property: options.property ?? "workspace" });
    this.name = "UnsafeRepositoryError";
  }
}

/** No `.git` at the workspace root: the caller explains (with a hint about an enclosing repository). */
export class MissingRepositoryError extends CapgateError {
  constructor() {
    super("not_a_repository", "the workspace has no .git directory");
    this.name = "MissingRepositoryError";
  }
}

/**
 * The environment for reading config files with git itself: nothing from the host, no
 * system or global file, so reading a file is all it does (`git config --file` runs no
 * program and, with `--no-includes`, reads no other file).
 */
function readerEnv(path: string | undefined): Record<string, string> {
  return {
    PATH: path ?? "/usr/bin:/bin",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    LC_ALL: "C",
    HOME: "/nonexistent",
  };
}

/** `key → values` of one config file, read by git (`--list -z`: "key\nvalue\0" records). */
async function readConfigFile(
  file: string,
  path: string | undefined,
  signal: AbortSignal | undefined,
): Promise<[string, string | undefined][]> {
  const r = await runProcess({
    file: "git",
    args: ["config", "--no-includes", "--file", file, "--list", "-z"],
    cwd: "/",
    env: readerEnv(path),
    timeoutMs: 10_000,
    maxOutputBytes: 4 * 1024 * 1024,
    signal,
  });
  if (r.exitCode !== 0 || r.truncated) {
    throw new UnsafeRepositoryError(
      `the repository config '${file}' cannot be read safely (${r.truncated ? "it is larger than 4 MiB" : r.stderr.trim().slice(0, 300) || `git config exited with ${r.exitCode}`}); fix or remove it before using the git tools.`,
    );
  }
  const out: [string, string | undefined][] = [];
  for (const record of r.stdout.split("\0")) {
    if (record === "") continue;
    const nl = record.indexOf("\n");
    out.push(nl === -1 ? [record, undefined] : [record.slice(0, nl), record.slice(nl + 1)]);
  }
  return out;
}

/** Parsed config files by path and identity (inode, size, mtime, ctime in ns): a changed file is read again. */
const parsedConfigs = new Map<string, { stamp: string; entries: [string, string | undefined][] }>();
const MAX_CACHED_CONFIGS = 256;

/**
 * `readConfigFile`, skipping the git process when the file is unchanged since the last
 * read. ctime cannot be set from user space and moves on every write or rename, so a
 * rewritten config (even one restored to its old mtime) is always read again.
 */
async function readConfigCached(
  file: string,
  path: string | undefined,
  signal: AbortSignal | undefined,
): Promise<[string, string | undefined][]> {
  const info = await stat(file, { bigint: true });
  const stamp = `${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}:${path ?? ""}`;
  const cached = parsedConfigs.get(file);
  if (cached?.stamp === stamp) return cached.entries;
  const entries = await readConfigFile(file, path, signal);
  if (parsedConfigs.size >= MAX_CACHED_CONFIGS) parsedConfigs.delete(parsedConfigs.keys().next().value!);
  parsedConfigs.set(file, { stamp, entries });
  return entries;
}

/** Does `target` (a path written in a metadata file, relative to `base`) resolve inside `root`? */
async function resolvesInside(root: string, base: string, target: string): Promise<string | undefined> {
  const abs = isAbsolute(target) ? target : resolve(base, target);
  let real: string;
  try {
    real = await realpath(abs);
  } catch {
    // A path that does not exist cannot be read from; judge it as written.
    real = resolve(abs);
  }
  return isInside(root, real) ? undefined : real;
}

async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

const rel = (root: string, abs: string) => relative(root, abs) || ".";

/** Metadata files are small; anything bigger is not one git would write. */
const MAX_METADATA_BYTES = 1024 * 1024;

/**
 * A small metadata file (`.git` as a file, `alternates`, `commondir`) as text, undefined
 * when it does not exist. Opened with `openRegularFile`, so a FIFO planted there is refused
 * at once instead of parking a thread of the shared I/O pool.
 */
async function readMetadataFile(root: string, file: string): Promise<string | undefined> {
  let opened: Awaited<ReturnType<typeof openRegularFile>>;
  try {
    opened = await openRegularFile(file, { shown: `'${rel(root, file)}'`, property: "workspace" });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (CapgateError.isInstance(error) && error.code === "not_a_regular_file") {
      throw new UnsafeRepositoryError(
        `${error.message.replace(/;.*$/, "")}; git would read it as repository metadata. Remove it.`,
      );
    }
    throw error;
  }
  try {
    if (opened.stats.size > MAX_METADATA_BYTES) {
      throw new UnsafeRepositoryError(
        `'${rel(root, file)}' is larger than 1 MiB; it is not metadata git writes. Remove it.`,
      );
    }
    return await opened.handle.readFile("utf8");
  } finally {
    await opened.handle.close();
  }
}

/**
 * `.git` must be a real directory at the workspace root: a `.git` *file* (`gitdir: …`, as
 * worktrees and submodules use) or a symlink could point anywhere, and git would follow it.
 */
async function checkGitDir(root: string): Promise<string> {
  const gitDir = join(root, ".git");
  const entry = await lstatOrNull(gitDir);
  if (!entry) throw new MissingRepositoryError();
  if (entry.isSymbolicLink()) {
    throw new UnsafeRepositoryError(
      `'.git' in the workspace is a symbolic link, so git would use a repository wherever it points; the git tools only use a real .git directory inside the workspace. Replace the link with the repository itself.`,
    );
  }
  if (entry.isFile()) {
    const text = (await readMetadataFile(root, gitDir)) ?? "";
    const target = /^gitdir:\s*(.*)$/m.exec(text)?.[1]?.trim();
    throw new UnsafeRepositoryError(
      `'.git' in the workspace is a file${target ? ` pointing git at '${target.slice(0, 200)}'` : ""} (a linked worktree or submodule), so git would read and write a repository outside the workspace; the git tools only use a real .git directory at the workspace root. Use the main checkout as the workspace.`,
    );
  }
  if (!entry.isDirectory()) {
    throw new UnsafeRepositoryError(
      `'.git' in the workspace is not a directory; the git tools need a repository.`,
    );
  }
  return gitDir;
}

/** Most entries of `.git` (outside the loose-object folders and `modules/`) looked at per check. */
export const MAX_METADATA_ENTRIES = 100_000;

/**
 * The socket git's own fsmonitor daemon listens on (macOS, Windows). The git tools never
 * talk to it (`core.fsmonitor=false`), and opening a socket fails at once, never blocks.
 */
const FSMONITOR_SOCKET = "fsmonitor--daemon.ipc";

/**
 * Folders of `.git` the walk does not enter: `modules/` holds submodule repositories (the
 * git tools never enter them), `lfs/` and `annex/` the object stores of Git LFS and
 * git-annex, which git itself never opens (their programs do, and no filter runs in the
 * tools); they can hold many thousands of files.
 */
const UNWALKED_TOP_DIRS = new Set(["modules", "lfs", "annex"]);

/** What a special (non-regular, non-directory) file does to git, for messages. */
function specialWhy(rel: string): string {
  const fix =
    rel === ".git/index" || /^\.git\/sharedindex\./.test(rel)
      ? `Remove it and rebuild the index from HEAD, outside capgate: \`rm ${rel} && git reset\`.`
      : `Remove it (\`rm ${rel}\`).`;
  return `git opens the files in .git by name, and opening a pipe blocks until someone writes to it (a device can act or never end), so git — the git tools and your own — would hang. ${fix}`;
}

/**
 * Every entry of `.git` git may open by name must be a regular file, a directory, or a link
 * to one of those: a FIFO at `.git/index` (or HEAD, packed-refs, info/exclude, a ref, a
 * reflog, rebase state, …) makes git block in open() — the tool call until its timeout, a
 * git left behind by a killed host forever. Walked: all of `.git` except the loose-object
 * folders `objects/<xx>` (named by hash, opened only to read that object) and
 * UNWALKED_TOP_DIRS; nothing is opened, types come
 * from the listing (and a link's target from stat). Links are not followed into
 * directories. Also, as before, a link that leads out of the workspace is refused in `.git`
 * itself, `objects/`, `objects/info`, `objects/pack` and anywhere under `refs/` and `logs/`
 * (every ref and reflog is a file git reads, rewrites or appends to: git.commit appends to
 * logs/HEAD, git.branch creates refs/heads/<name>).
 */
async function checkEntries(root: string, gitDir: string): Promise<void> {
  const linkChecked = (relDir: string) =>
    ["", "objects", "objects/info", "objects/pack"].includes(relDir) || /^(refs|logs)(\/|$)/.test(relDir);
  const queue: string[] = [""];
  let seen = 0;
  while (queue.length > 0) {
    const relDir = queue.shift() as string;
    const dir = relDir === "" ? gitDir : join(gitDir, ...relDir.split("/"));
    let entries: Dirent[];
    try {
      // Dirent types come with the listing: no lstat per entry.
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > MAX_METADATA_ENTRIES) {
        throw new UnsafeRepositoryError(
          `'.git' holds more than ${MAX_METADATA_ENTRIES} entries outside its loose objects, too many to check that none is a pipe or device git would hang on; the git tools do not run unchecked. Pack the repository (\`git gc\`, \`git pack-refs --all\`) or remove what does not belong in .git.`,
        );
      }
      const relPath = relDir === "" ? entry.name : `${relDir}/${entry.name}`;
      const path = join(dir, entry.name);
      const shown = `.git/${relPath}`;
      // Dirent types are known on the file systems git runs on; lstat only for the rest.
      const known = entry.isDirectory() || entry.isFile() || entry.isSymbolicLink();
      const info = known ? entry : await lstat(path).catch(() => null);
      if (!info || info.isFile()) continue; // a regular file, or gone meanwhile
      if (info.isDirectory()) {
        const skip =
          (relDir === "objects" && entry.name !== "info" && entry.name !== "pack") ||
          (relDir === "" && UNWALKED_TOP_DIRS.has(entry.name));
        if (!skip) queue.push(relPath);
        continue;
      }
      if (info.isSymbolicLink()) {
        if (linkChecked(relDir)) {
          const outside = await resolvesInside(root, dir, path);
          if (outside) {
            throw new UnsafeRepositoryError(
              `'${rel(root, path)}' is a symbolic link to '${outside}', outside the workspace; git would read or write there. Remove the link.`,
            );
          }
        }
        const target = await stat(path).catch(() => null);
        if (target && !target.isFile() && !target.isDirectory()) {
          throw new UnsafeRepositoryError(
            `'${shown}' is a symbolic link to ${describeFileType(fileTypeOf(target))} ('${await realpath(path).catch(() => "?")}'), not a regular file; ${specialWhy(shown)}`,
          );
        }
        continue;
      }
      if (info.isSocket() && relPath === FSMONITOR_SOCKET) continue;
      const special = await lstat(path).catch(() => null);
      if (!special || special.isFile() || special.isDirectory() || special.isSymbolicLink()) continue;
      throw new UnsafeRepositoryError(
        `'${shown}' is ${describeFileType(fileTypeOf(special))}, not a regular file; ${specialWhy(shown)}`,
      );
    }
  }
}

/** `objects/info/alternates` and $GIT_ALTERNATE_OBJECT_DIRECTORIES-style borrowing from outside. */
async function checkAlternates(root: string, objectsDir: string): Promise<void> {
  const file = join(objectsDir, "info", "alternates");
  const text = await readMetadataFile(root, file);
  if (text === undefined) return;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    // git unquotes C-style quoted entries; a quoted entry is judged by its unquoted text.
    const target = line.startsWith('"') ? line.slice(1, line.endsWith('"') ? -1 : undefined) : line;
    const outside = await resolvesInside(root, objectsDir, target);
    if (outside) {
      throw new UnsafeRepositoryError(
        `'${rel(root, file)}' borrows objects from '${outside}', outside the workspace, so git would show that repository's content. Remove the file (or the line) to use the git tools.`,
      );
    }
  }
}

/**
 * `.git/commondir` names the directory git takes config, hooks, objects and refs from. git
 * writes one only in a linked worktree's metadata (`.git/worktrees/<id>/commondir`), never
 * in a repository's own `.git`, so one there was planted — refused wherever it points,
 * inside the workspace too (a model-written directory there has config and hooks of its
 * own). Only a commondir naming the repository itself (".", the sandbox's placeholder
 * while a command runs) changes nothing and passes.
 */
async function checkCommonDir(root: string, gitDir: string): Promise<void> {
  const file = join(gitDir, "commondir");
  const text = await readMetadataFile(root, file);
  if (text === undefined) return;
  const target = text.replace(/[\r\n]+$/, "");
  const named = isAbsolute(target) ? target : resolve(gitDir, target);
  const real = await realpath(named).catch(() => resolve(named));
  if (real === (await realpath(gitDir))) return;
  const outside = await resolvesInside(root, gitDir, target);
  throw new UnsafeRepositoryError(
    `'.git/commondir' points git at '${outside ?? real}'${outside ? ", outside the workspace" : ""}, so git would take config, hooks and objects from there; git never writes a commondir in a repository's own .git (only in .git/worktrees/<id>), so it was planted. The git tools refuse it: remove the file.`,
  );
}

/**
 * The entries git runs programs from or is redirected by (PROTECTED_GIT_ENTRIES — the same
 * list the sandbox makes read-only) must be real files or directories: a symbolic link
 * there can be swapped for one of the model's own, inside the workspace as well as out.
 */
async function checkProtectedEntries(root: string, gitDir: string): Promise<void> {
  for (const entry of PROTECTED_GIT_ENTRIES) {
    const parts = entry.path.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const path = join(gitDir, ...parts.slice(0, i));
      const info = await lstatOrNull(path);
      if (!info) break;
      if (info.isSymbolicLink()) {
        const target = await realpath(path).catch(() => "a missing target");
        throw new UnsafeRepositoryError(
          `'${rel(root, path)}' is a symbolic link (to '${target}'); git takes ${entry.why} from '.git/${entry.path}', and a link there can be swapped for anything. Replace the link with the ${i === parts.length && entry.kind === "file" ? "file" : "directory"} itself to use the git tools.`,
        );
      }
    }
  }
}

/** Config keys that pull further config in from elsewhere: refused, since their content is unchecked. */
function isInclude(key: string): boolean {
  return key === "include.path" || (key.startsWith("includeif.") && key.endsWith(".path"));
}

/** `section.subsection.name` → [section, subsection, name]; subsection undefined for two-part keys. */
function splitKey(key: string): [string, string | undefined, string] {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  if (first === last) return [key.slice(0, first), undefined, key.slice(last + 1)];
  return [key.slice(0, first), key.slice(first + 1, last), key.slice(last + 1)];
}

/**
 * Overrides for the programs a config names. git has no switch that disables every
 * filter or driver, but a later `-c filter.X.clean=` (empty) does disable that one, so each
 * configured name gets empty values; a name git could not take back through `-c` (it
 * holds `=` or a control character) is refused instead.
 */
function overridesFor(entries: readonly [string, string | undefined][], source: string): string[] {
  const out = new Set<string>();
  for (const [key, value] of entries) {
    const lower = key.toLowerCase();
    if (isInclude(lower)) {
      throw new UnsafeRepositoryError(
        `${source} sets '${key}${value === undefined ? "" : ` = ${value.slice(0, 200)}`}', which pulls in configuration from another file that the git tools cannot check; remove the setting to use them.`,
        { property: key },
      );
    }
    if (lower === "core.worktree") {
      throw new UnsafeRepositoryError(
        `${source} sets 'core.worktree = ${(value ?? "").slice(0, 200)}', which would point git at files outside the workspace; the git tools always use the workspace as the work tree. Remove it with \`git config --unset core.worktree\`.`,
        { property: key },
      );
    }
    if (lower.startsWith("hook.")) {
      // Config-defined hooks (newer git): core.hooksPath=/dev/null is not documented to cover them.
      throw new UnsafeRepositoryError(
        `${source} sets '${key}', a hook defined in config; the git tools never run hooks. Remove the setting to use them.`,
        { property: key },
      );
    }
    const [section, sub, name] = splitKey(key);
    const s = section.toLowerCase();
    if (sub === undefined) continue;
    const drivers: Record<string, readonly string[]> = {
      filter: ["clean", "smudge", "process"],
      diff: ["textconv", "command"],
      merge: ["driver"],
    };
    const names = drivers[s];
    if (!names?.includes(name.toLowerCase())) continue;
    if (sub.includes("=") || [...sub].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
      throw new UnsafeRepositoryError(
        `${source} configures a ${s} driver named ${JSON.stringify(sub)} ('${key}'), a name git cannot be told to ignore; remove the setting to use the git tools.`,
        { property: key },
      );
    }
    for (const n of names) out.add(`${s}.${sub}.${n}=`);
    if (s === "filter") out.add(`filter.${sub}.required=false`);
  }
  return [...out];
}

/**
 * Check the repository rooted at `root` before git touches it: `.git` a real directory,
 * no links leading outside, no link at an entry the sandbox protects, no planted
 * `commondir`, no `alternates` leading outside, no `include`/`core.worktree` in its config
 * or config.worktree, and every filter/diff/merge driver they configure neutralised.
 * @throws MissingRepositoryError when there is no `.git`; UnsafeRepositoryError naming the file or setting otherwise.
 */
export async function checkRepository(
  root: string,
  options: { path?: string; signal?: AbortSignal },
): Promise<CheckedRepository> {
  const gitDir = await checkGitDir(root);
  await checkEntries(root, gitDir);
  await checkProtectedEntries(root, gitDir);
  await checkCommonDir(root, gitDir);
  await checkAlternates(root, join(gitDir, "objects"));
  const overrides: string[] = [];
  const keys = new Set<string>();
  const configs = [join(gitDir, "config"), join(gitDir, "config.worktree")];
  for (const file of configs) {
    const info = await lstatOrNull(file);
    if (!info) continue;
    if (!info.isFile()) {
      throw new UnsafeRepositoryError(
        `'${rel(root, file)}' is not a regular file; git would not read it as config safely.`,
      );
    }
    const entries = await readConfigCached(file, options.path, options.signal);
    overrides.push(...overridesFor(entries, `'${rel(root, file)}'`));
    for (const [key] of entries) keys.add(key.toLowerCase());
  }
  return { root, gitDir, overrides: [...new Set(overrides)], keys };
}
