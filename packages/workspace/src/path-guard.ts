import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { CapgateError } from "@capgate/schema";
import type { PolicyCheck } from "@capgate/tools";
import { PolicyDeniedError } from "@capgate/tools";
import { lstatOrUndefined } from "./fs-probe.js";
import { isRepositoryLayout, REPOSITORY_LAYOUT } from "./git-metadata.js";
import { type HiddenPath, hiddenPathAt, hiddenPathBelow, hiddenPathsInside } from "./hidden-paths.js";
import { isInside } from "./path-within.js";
import { isPolicyFile, POLICY_FILE_NAME } from "./policy-file.js";

export { isInside };

/** Longest path accepted, in UTF-8 bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;
/** Longest single path component accepted, in UTF-8 bytes (NAME_MAX). */
export const MAX_COMPONENT_BYTES = 255;

export interface ResolveInWorkspaceOptions {
  /**
   * The path will be written (created, replaced, moved onto, deleted). Then the final
   * component must not be a symbolic link — writes never go through a symlink — and the
   * path may not be the workspace root itself, nor lie in (or be) a `.git` directory of any
   * repository in the workspace (see `gitMetadataComponent`) unless `allowGitMetadata`.
   */
  forWrite?: boolean;
  /** With `forWrite`: allow paths under `.git` (only the git tools themselves need this). */
  allowGitMetadata?: boolean;
  /**
   * The path need not exist (a file about to be created). Its nearest existing parent is
   * resolved and checked instead. Without it a missing path throws `not_found`.
   */
  allowMissing?: boolean;
  /** The tool argument the path came from, named in errors (default "path"). */
  property?: string;
}

/**
 * Where paths are resolved, and whose secrets stay hidden there: a ToolContext fits. The
 * workspace's own HOME-relative secrets (~/.ssh, ~/.aws, … — `HIDDEN_HOME_PATHS`, for the
 * process's home and `env.HOME`) and `stateDir` are refused wherever they lie inside it,
 * the same set the sandbox hides from commands. A bare workspace string stands for the
 * process's own environment (`process.env`, its `$CAPGATE_HOME` as the state dir).
 */
export interface WorkspaceScope {
  workspace: string;
  stateDir?: string;
  env?: Record<string, string | undefined>;
}

function scopeOf(workspace: string | WorkspaceScope): WorkspaceScope {
  if (typeof workspace !== "string") return workspace;
  const stateDir = process.env.CAPGATE_HOME;
  return { workspace, env: process.env, ...(stateDir && isAbsolute(stateDir) ? { stateDir } : {}) };
}

/**
 * The hidden paths (secrets under HOME, the state dir) that lie inside the scope's
 * workspace, by absolute and real path: empty unless the workspace contains a home
 * directory or the state dir. Walkers (fs.list, fs.search, fs.glob) skip every entry at or
 * under one of them (`hiddenPathAt`), so not even a name below them is shown.
 */
export async function workspaceHiddenPaths(workspace: string | WorkspaceScope): Promise<HiddenPath[]> {
  const scope = scopeOf(workspace);
  const root = await realWorkspace(scope.workspace);
  return hiddenPathsInside(root, scope);
}

const realWorkspaces = new Map<string, Promise<string>>();

/**
 * The real path of a workspace root, resolved once per process and cached (the root is
 * not expected to move while a host runs). Throws when it does not exist.
 */
export function realWorkspace(workspace: string): Promise<string> {
  let real = realWorkspaces.get(workspace);
  if (!real) {
    real = realpath(workspace).catch((error: NodeJS.ErrnoException) => {
      realWorkspaces.delete(workspace);
      throw new CapgateError(
        "invalid_workspace",
        `workspace root '${workspace}' is unusable: ${error.message}`,
        {
          property: "workspace",
          cause: error,
        },
      );
    });
    realWorkspaces.set(workspace, real);
  }
  return real;
}

/**
 * The leading part of a workspace-relative path up to its first `.git` component
 * (`sub/.git` for `sub/.git/hooks/pre-commit`), or undefined. Any depth counts — nested
 * repositories and submodules have hooks and config too — and the name is compared
 * case-insensitively, so `.GIT` on a case-insensitive file system is caught as well.
 */
export function gitMetadataComponent(relPath: string): string | undefined {
  const parts = relPath.split(/[\\/]/);
  const at = parts.findIndex((p) => p.toLowerCase() === ".git");
  return at === -1 ? undefined : parts.slice(0, at + 1).join("/");
}

/** `abs` relative to the workspace root for messages ("." for the root itself). */
export function toWorkspaceRelative(workspaceReal: string, abs: string): string {
  const rel = relative(workspaceReal, abs);
  return rel === "" ? "." : rel;
}

/**
 * Resolve a path a tool was given to an absolute **real** path inside the workspace, or
 * throw. Always operate on the returned path, never on the input: the returned path has
 * every symlink resolved and has been checked.
 *
 * Checks, in order: it is a string without NUL bytes, at most 4096 bytes with components
 * of at most 255; as text (relative paths resolve against the workspace, absolute ones must
 * lie inside it, `..` may not climb out); then again after `realpath` of the path — or, for
 * a path that does not exist yet, of its nearest existing parent — so a symlink pointing
 * outside is refused. Dangling symlinks and symlink loops are refused with their own
 * message. With `forWrite` the final component must not be a symlink at all.
 *
 * @throws PolicyDeniedError (code `policy_denied`, `property` = `options.property`) when the
 *   path escapes or is malformed; CapgateError `not_found` when it does not exist and
 *   `allowMissing` is not set, or a parent is not a directory.
 */
export async function resolveInWorkspace(
  workspace: string | WorkspaceScope,
  userPath: string,
  options: ResolveInWorkspaceOptions = {},
): Promise<string> {
  const property = options.property ?? "path";
  const deny = (message: string, cause?: unknown): PolicyDeniedError =>
    new PolicyDeniedError(message, { property, cause });
  checkText(userPath, property, deny);
  const scope = scopeOf(workspace);
  const root = await realWorkspace(scope.workspace);
  try {
    const hidden = hiddenPathsInside(root, scope);
    // As text first, so a missing file under ~/.ssh reads the same as an existing one.
    const lexical = lexicalTarget(scope.workspace, root, userPath, property, deny);
    checkHidden(root, hidden, userPath, lexical, options, property, deny);
    const real = await resolveChecked(scope.workspace, root, userPath, options, property, deny);
    checkHidden(root, hidden, userPath, real, options, property, deny);
    return real;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const shown = JSON.stringify(userPath);
    if (code === "ELOOP")
      throw deny(`${property} ${shown} goes through a symbolic link loop; it cannot be resolved.`, error);
    if (code === "ENAMETOOLONG")
      throw deny(`${property} ${shown} resolves to a name that is too long.`, error);
    throw error;
  }
}

async function resolveChecked(
  workspace: string,
  root: string,
  userPath: string,
  options: ResolveInWorkspaceOptions,
  property: string,
  deny: (message: string, cause?: unknown) => PolicyDeniedError,
): Promise<string> {
  const lexical = lexicalTarget(workspace, root, userPath, property, deny);
  const shown = JSON.stringify(userPath);
  const rel = toWorkspaceRelative(root, lexical);

  let real: string;
  const entry = await lstatOrNull(lexical);
  if (entry) {
    if (entry.isSymbolicLink() && options.forWrite) {
      const target = await readlink(lexical).catch(() => "?");
      throw deny(
        `${property} ${shown} is a symbolic link (→ ${target}); writes never go through a symlink. Write to the link's target path instead, if it is inside the workspace.`,
      );
    }
    real = await realpathOrExplain(lexical, rel, shown, property, deny);
  } else {
    if (!options.allowMissing) {
      // A dangling symlink somewhere on the way reads better than "not found".
      await explainMissingParent(lexical, root, shown, property, deny);
      throw new CapgateError("not_found", `${property} ${shown} does not exist (workspace path '${rel}').`, {
        property,
      });
    }
    real = await resolveMissing(lexical, root, shown, property, deny);
  }

  if (!isInside(root, real)) {
    throw deny(
      `${property} ${shown} resolves to '${real}', outside the workspace '${root}' (through a symbolic link); only paths inside the workspace are allowed.`,
    );
  }
  if (real.length > MAX_PATH_BYTES)
    throw deny(`${property} ${shown} resolves to a path longer than ${MAX_PATH_BYTES} bytes.`);
  if (options.forWrite && real === root) {
    throw deny(`${property} ${shown} is the workspace root itself; name a file or directory inside it.`);
  }
  if (options.forWrite && (isPolicyFile(rel) || isPolicyFile(toWorkspaceRelative(root, real)))) {
    throw deny(
      `${property} ${shown} is ${POLICY_FILE_NAME}, capgate's own policy file (shell rules, MCP servers and their commands, approvals): file tools never write it, so a model cannot choose its own rules. Edit it yourself.`,
    );
  }
  if (options.forWrite && !options.allowGitMetadata) {
    // Judged on the text and on the real path, so neither `a/../.git` nor a link to .git gets by.
    const hit = gitMetadataComponent(rel) ?? gitMetadataComponent(toWorkspaceRelative(root, real));
    if (hit !== undefined) {
      throw deny(
        `${property} ${shown} is inside '${hit}', a git repository's metadata directory (hooks, config and objects git trusts); file tools never write there. Use the git tools (git.add, git.commit, git.branch, git.checkout) to change a repository.`,
      );
    }
    // A repository directory by another name — `git init --separate-git-dir=.repo` (which a
    // `.git` file points at), or a bare repository — is the same metadata: judged by what
    // git itself looks for, not by its name.
    const repository = await repositoryDirOnPath(root, real);
    if (repository?.completes !== undefined) {
      const where = toWorkspaceRelative(root, repository.dir);
      throw deny(
        `${property} ${shown} would make '${where}' a git repository directory: with '${repository.completes}' beside the ${repositoryNamesIn(repository.dir)} already there, git takes the directory for a repository whose config and hooks it trusts. File tools never create one; use another name, or the git tools.`,
      );
    }
    if (repository !== undefined) {
      throw deny(
        `${property} ${shown} is inside '${toWorkspaceRelative(root, repository.dir)}', a git repository directory (it holds HEAD, objects and refs: hooks and config git trusts); file tools never write there. Use the git tools to change a repository.`,
      );
    }
  }
  return real;
}

/**
 * The first directory from the workspace root down to `real` (itself included) that git
 * would take for a repository directory (isRepositoryLayout: `HEAD` with `objects` and
 * `refs`, or with `commondir`; entries of any kind), or one that writing `real` would make
 * into one: a write creating the last name such a set needs (`HEAD` beside `objects` and
 * `refs`, `commondir` beside `HEAD`) is the same metadata, and judging only what is
 * already there would let the last piece through.
 */
async function repositoryDirOnPath(
  root: string,
  real: string,
): Promise<{ dir: string; completes?: string } | undefined> {
  const rel = relative(root, real);
  const parts = rel === "" ? [] : rel.split(sep);
  let dir = root;
  for (let i = 0; i <= parts.length; i++) {
    if (i > 0) dir = join(dir, parts[i - 1]!);
    const found = await Promise.all(
      REPOSITORY_LAYOUT.map((name) =>
        lstat(join(dir, name)).then(
          () => name,
          () => undefined,
        ),
      ),
    );
    const present = new Set(found.filter((n): n is string => n !== undefined));
    if (isRepositoryLayout(present)) return { dir };
    const next = parts[i];
    if (
      next !== undefined &&
      REPOSITORY_LAYOUT.includes(next) &&
      isRepositoryLayout(new Set([...present, next]))
    ) {
      return { dir, completes: next };
    }
    if (i < parts.length && !(await lstat(join(dir, parts[i]!)).catch(() => undefined))?.isDirectory()) break;
  }
  return undefined;
}

/** The REPOSITORY_LAYOUT names `dir` holds, for a message ("'HEAD' and 'refs'"). */
function repositoryNamesIn(dir: string): string {
  return REPOSITORY_LAYOUT.filter((name) => lstatOrUndefined(join(dir, name)))
    .map((name) => `'${name}'`)
    .join(" and ");
}

/**
 * Refuse a path at or under a hidden path (the caller judges the text and the real path,
 * so neither `a/../.ssh` nor a link into ~/.ssh gets by); for writes (move, delete) also a
 * directory that holds one, since moving or deleting it would take the secret along.
 */
function checkHidden(
  root: string,
  hidden: readonly HiddenPath[],
  userPath: string,
  abs: string,
  options: ResolveInWorkspaceOptions,
  property: string,
  deny: (message: string) => PolicyDeniedError,
): void {
  if (hidden.length === 0) return;
  const shown = JSON.stringify(userPath);
  const hit = hiddenPathAt(hidden, abs);
  if (hit) {
    throw deny(
      `${property} ${shown} is inside '${toWorkspaceRelative(root, hit.path)}' (${hit.label}), which is hidden from every tool and sandboxed command because it holds credentials or capgate's own state; capgate never reads, lists or changes it. See docs/security.md.`,
    );
  }
  if (!options.forWrite) return;
  const below = hiddenPathBelow(hidden, abs);
  if (below) {
    throw deny(
      `${property} ${shown} contains '${toWorkspaceRelative(root, below.path)}' (${below.label}), which is hidden from every tool because it holds credentials or capgate's own state; moving or deleting ${shown} would take it along. Name the entries next to it instead.`,
    );
  }
}

function checkText(
  userPath: unknown,
  property: string,
  deny: (m: string) => PolicyDeniedError,
): asserts userPath is string {
  if (typeof userPath !== "string") throw deny(`${property} must be a string, got ${typeof userPath}.`);
  if (userPath === "") throw deny(`${property} is empty; use "." for the workspace root.`);
  if (userPath.includes("\0")) throw deny(`${property} contains a NUL byte, which no file name can contain.`);
  if (Buffer.byteLength(userPath) > MAX_PATH_BYTES) {
    throw deny(`${property} is ${Buffer.byteLength(userPath)} bytes long; the limit is ${MAX_PATH_BYTES}.`);
  }
  for (const part of userPath.split("/")) {
    if (Buffer.byteLength(part) > MAX_COMPONENT_BYTES) {
      throw deny(
        `${property} has a component of ${Buffer.byteLength(part)} bytes ('${part.slice(0, 24)}…'); the limit is ${MAX_COMPONENT_BYTES}.`,
      );
    }
  }
}

/**
 * The path as text, inside the real workspace root. An absolute path may name the workspace
 * either as configured or by its real path (e.g. /tmp vs /private/tmp on macOS).
 */
function lexicalTarget(
  workspace: string,
  root: string,
  userPath: string,
  property: string,
  deny: (m: string) => PolicyDeniedError,
): string {
  const shown = JSON.stringify(userPath);
  if (isAbsolute(userPath)) {
    const abs = resolve(userPath);
    for (const base of [root, resolve(workspace)]) {
      if (isInside(base, abs)) return join(root, relative(base, abs));
    }
    throw deny(
      `${property} ${shown} is outside the workspace '${root}'; use a path relative to the workspace (e.g. "src/index.ts").`,
    );
  }
  const abs = resolve(root, userPath);
  if (!isInside(root, abs)) {
    throw deny(
      `${property} ${shown} climbs out of the workspace with '..'; only paths inside the workspace are allowed.`,
    );
  }
  return abs;
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

async function realpathOrExplain(
  path: string,
  rel: string,
  shown: string,
  property: string,
  deny: (m: string, cause?: unknown) => PolicyDeniedError,
): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") {
      throw deny(
        `${property} ${shown} is part of a symbolic link loop ('${rel}'); it cannot be resolved.`,
        error,
      );
    }
    if (code === "ENOENT" || code === "ENOTDIR") {
      const target = await readlink(path).catch(() => undefined);
      throw deny(
        target === undefined
          ? `${property} ${shown} goes through a dangling symbolic link ('${rel}').`
          : `${property} ${shown} is a dangling symbolic link (→ ${target}); its target does not exist.`,
        error,
      );
    }
    throw error;
  }
}

/** Walk up to the nearest existing ancestor, check it, and append the missing components. */
async function resolveMissing(
  lexical: string,
  root: string,
  shown: string,
  property: string,
  deny: (m: string, cause?: unknown) => PolicyDeniedError,
): Promise<string> {
  const missing: string[] = [];
  let current = lexical;
  for (;;) {
    missing.unshift(basename(current));
    current = dirname(current);
    const entry = await lstatOrNull(current);
    if (entry) {
      const realParent = await realpathOrExplain(
        current,
        toWorkspaceRelative(root, current),
        shown,
        property,
        deny,
      );
      const stat = await lstatOrNull(realParent);
      if (!stat?.isDirectory()) {
        throw new CapgateError(
          "not_found",
          `${property} ${shown} cannot be created: '${toWorkspaceRelative(root, current)}' is not a directory.`,
          { property },
        );
      }
      if (!isInside(root, realParent)) {
        throw deny(
          `${property} ${shown} would be created under '${realParent}', outside the workspace '${root}' (through a symbolic link).`,
        );
      }
      return join(realParent, ...missing);
    }
    if (current === root || current === dirname(current)) {
      throw new CapgateError("invalid_workspace", `workspace root '${root}' no longer exists.`, { property });
    }
  }
}

async function explainMissingParent(
  lexical: string,
  root: string,
  shown: string,
  property: string,
  deny: (m: string, cause?: unknown) => PolicyDeniedError,
): Promise<void> {
  let current = dirname(lexical);
  while (isInside(root, current) && current !== root) {
    const entry = await lstatOrNull(current);
    if (entry) {
      if (entry.isSymbolicLink()) {
        await realpathOrExplain(current, toWorkspaceRelative(root, current), shown, property, deny);
      }
      return;
    }
    current = dirname(current);
  }
}

/**
 * A ready-made `policies` entry confining path arguments, so an escape is refused before
 * approval is asked: `policies: { write: workspacePathPolicy("path", { forWrite: true }) }`.
 * Missing paths pass here (the handler reports them); the handler must still call
 * `resolveInWorkspace` and use its result.
 */
export function workspacePathPolicy(
  properties: string | readonly string[],
  options: Pick<ResolveInWorkspaceOptions, "forWrite"> = {},
): PolicyCheck {
  const names = typeof properties === "string" ? [properties] : properties;
  return async (args, ctx) => {
    for (const property of names) {
      const value = args[property];
      if (value === undefined) continue;
      const list = Array.isArray(value) ? value : [value];
      for (const item of list) {
        await resolveInWorkspace(ctx, item as string, { ...options, allowMissing: true, property });
      }
    }
    return undefined;
  };
}
