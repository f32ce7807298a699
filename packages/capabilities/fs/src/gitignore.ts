import { join } from "node:path";
import { openRegularFile } from "@capgate/workspace";
import ignore, { type Ignore } from "ignore";

/** Directory names never descended into by fs.search, fs.glob and fs.list. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set(["node_modules", ".git"]);

/** Largest .gitignore read; anything bigger is not a hand-written ignore file. */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/**
 * The .gitignore rules of a workspace, as git applies them: every directory's `.gitignore`
 * (plus `.git/info/exclude` at the root) matches paths relative to that directory, deeper
 * files override shallower ones (`!keep.log` re-includes), and nothing inside an ignored
 * directory can be re-included. Rule files are read lazily, once per directory; symlinked
 * ones are not followed. Matching is done by the `ignore` package (gitignore semantics).
 */
export class GitignoreRules {
  readonly #root: string;
  readonly #matchers = new Map<string, Promise<Ignore | null>>();
  readonly #loaded = new Map<string, Ignore | null>();
  readonly #dirVerdicts = new Map<string, Promise<boolean>>();
  /** Directory → the rule files that apply in it (its own and its ancestors', root first). */
  readonly #chains = new Map<string, readonly { dir: string; matcher: Ignore }[]>();

  /** `root` is the real workspace root; paths passed in are relative to it with `/`. */
  constructor(root: string) {
    this.#root = root;
  }

  /**
   * Load the rule files of `dirRel` and of every directory above it, so that
   * `ignoredInWalk` can answer for its entries without waiting. `names` (the directory's
   * listing, when the caller has it) saves looking for a .gitignore that is not there.
   */
  async prepare(dirRel: string, names?: readonly { name: string }[]): Promise<void> {
    const parts = dirRel === "." || dirRel === "" ? [] : dirRel.split("/");
    const own = parts.join("/");
    // The walker already has the directory's listing: no .gitignore in it, nothing to read.
    if (names && own !== "" && !this.#loaded.has(own) && !names.some((n) => n.name === ".gitignore")) {
      this.#loaded.set(own, null);
    }
    if (this.#chains.has(own)) return;
    // From the nearest prepared ancestor down (the walker prepares top-down: the parent), so
    // a walk costs one step per directory, not one per directory and level of depth.
    let depth = parts.length - 1;
    while (depth >= 0 && !this.#chains.has(parts.slice(0, depth).join("/"))) depth--;
    let chain = depth >= 0 ? (this.#chains.get(parts.slice(0, depth).join("/")) ?? []) : [];
    for (let d = depth + 1; d <= parts.length; d++) {
      const dir = parts.slice(0, d).join("/");
      let matcher = this.#loaded.get(dir);
      if (matcher === undefined) {
        matcher = await this.#matcher(dir);
        this.#loaded.set(dir, matcher);
      }
      if (matcher) chain = [...chain, { dir, matcher }];
      this.#chains.set(dir, chain);
    }
  }

  /**
   * Whether `rel` is ignored, given that its parent directories are not (the walker checks
   * directories on the way down and prunes ignored ones) and that `prepare` was awaited for
   * its directory.
   */
  ignoredInWalk(rel: string, isDir: boolean): boolean {
    const slash = rel.lastIndexOf("/");
    const parent = slash < 0 ? "" : rel.slice(0, slash);
    const chain = this.#chains.get(parent);
    if (chain === undefined) throw new Error(`GitignoreRules: prepare('${parent}') was not awaited`);
    let ignored = false;
    // Rule files from the root down to the entry's own directory; the deepest decision wins.
    for (const { dir, matcher } of chain) {
      const sub = (dir === "" ? rel : rel.slice(dir.length + 1)) + (isDir ? "/" : "");
      const verdict = matcher.test(sub);
      if (verdict.ignored) ignored = true;
      else if (verdict.unignored) ignored = false;
    }
    return ignored;
  }

  /** Whether `rel` is ignored, checking each of its parent directories too (for a path named directly). */
  async ignored(rel: string, isDir: boolean): Promise<boolean> {
    if (rel === "." || rel === "") return false;
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      if (await this.#dirIgnored(parts.slice(0, i).join("/"))) return true;
    }
    await this.prepare(parts.slice(0, -1).join("/"));
    return this.ignoredInWalk(rel, isDir);
  }

  #dirIgnored(dir: string): Promise<boolean> {
    let verdict = this.#dirVerdicts.get(dir);
    if (!verdict) {
      verdict = this.ignored(dir, true);
      this.#dirVerdicts.set(dir, verdict);
    }
    return verdict;
  }

  #matcher(dir: string): Promise<Ignore | null> {
    let matcher = this.#matchers.get(dir);
    if (!matcher) {
      matcher = this.#load(dir);
      this.#matchers.set(dir, matcher);
    }
    return matcher;
  }

  async #load(dir: string): Promise<Ignore | null> {
    const base = dir === "" ? this.#root : join(this.#root, dir);
    const files = [join(base, ".gitignore")];
    if (dir === "") files.unshift(join(base, ".git", "info", "exclude"));
    let matcher: Ignore | null = null;
    for (const file of files) {
      const text = await readRuleFile(file);
      if (text === null) continue;
      matcher ??= ignore();
      matcher.add(text);
    }
    return matcher;
  }
}

/**
 * A .gitignore (or info/exclude) as text, or null. Read through `openRegularFile`, so a
 * FIFO, socket or link named `.gitignore` — or swapped in after a check — is skipped
 * instead of blocking the walk, and so is one reached through a linked directory (a `.git`
 * that is a link to outside the workspace: its info/exclude is not the workspace's to read).
 */
async function readRuleFile(file: string): Promise<string | null> {
  let opened: Awaited<ReturnType<typeof openRegularFile>>;
  try {
    opened = await openRegularFile(file, { guarded: true });
  } catch {
    return null;
  }
  try {
    if (opened.stats.size > MAX_IGNORE_FILE_BYTES) return null;
    return await opened.handle.readFile("utf8");
  } catch {
    return null;
  } finally {
    await opened.handle.close();
  }
}
