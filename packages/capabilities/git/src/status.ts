import type { ToolContext } from "@capgate/tools";
import { gitOk } from "./run-git.js";

export interface StatusEntry {
  path: string;
  /** The old path of a rename or copy. */
  origPath?: string;
  /** Index (staged) state letter, "." when unchanged; "?" for untracked. */
  index: string;
  /** Working-tree (unstaged) state letter, "." when unchanged; "?" for untracked. */
  worktree: string;
  kind: "changed" | "renamed" | "unmerged" | "untracked";
}

export interface RepoStatus {
  /** The branch HEAD is on (also before the first commit); null when detached. */
  branch: string | null;
  detached: boolean;
  /** The commit HEAD points to; null before the first commit. */
  head: string | null;
  upstream?: string;
  ahead?: number;
  behind?: number;
  entries: StatusEntry[];
  staged: number;
  unstaged: number;
  untracked: number;
  conflicted: number;
  /** The listing was longer than could be read; entries holds its beginning. */
  truncated: boolean;
}

/** Machine-read output gets more room than the model-facing summary. */
export const MACHINE_OUTPUT_BYTES = 8 * 1024 * 1024;
/** Most entries listed in a summary (data carries all of them). */
const MAX_LISTED = 200;

/** Text after the first `n` space-separated fields (paths may contain spaces). */
function afterFields(record: string, n: number): string {
  let at = 0;
  for (let i = 0; i < n; i++) {
    at = record.indexOf(" ", at) + 1;
    if (at === 0) return "";
  }
  return record.slice(at);
}

/** Parse `git status --porcelain=v2 --branch -z`. */
export function parseStatus(text: string, truncated = false): RepoStatus {
  const status: RepoStatus = {
    branch: null,
    detached: false,
    head: null,
    entries: [],
    staged: 0,
    unstaged: 0,
    untracked: 0,
    conflicted: 0,
    truncated,
  };
  const records = text.split("\0");
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record === "") continue;
    if (record.startsWith("# branch.oid ")) {
      const oid = record.slice(13);
      status.head = oid === "(initial)" ? null : oid;
    } else if (record.startsWith("# branch.head ")) {
      const head = record.slice(14);
      status.detached = head === "(detached)";
      status.branch = status.detached ? null : head;
    } else if (record.startsWith("# branch.upstream ")) {
      status.upstream = record.slice(18);
    } else if (record.startsWith("# branch.ab ")) {
      const m = /^\+(\d+) -(\d+)$/.exec(record.slice(12));
      if (m) [status.ahead, status.behind] = [Number(m[1]), Number(m[2])];
    } else if (record.startsWith("1 ") || record.startsWith("2 ") || record.startsWith("u ")) {
      const type = record[0];
      const [index = ".", worktree = "."] = record.slice(2, 4);
      const fields = type === "1" ? 8 : type === "2" ? 9 : 10;
      const entry: StatusEntry = {
        path: afterFields(record, fields),
        index,
        worktree,
        kind: type === "1" ? "changed" : type === "2" ? "renamed" : "unmerged",
      };
      if (type === "2") entry.origPath = records[++i] ?? "";
      status.entries.push(entry);
      if (entry.kind === "unmerged") status.conflicted++;
      else {
        if (index !== ".") status.staged++;
        if (worktree !== ".") status.unstaged++;
      }
    } else if (record.startsWith("? ")) {
      status.entries.push({ path: record.slice(2), index: "?", worktree: "?", kind: "untracked" });
      status.untracked++;
    }
  }
  return status;
}

/** One line like git's own: "On branch main, tracking origin/main (ahead 1)". */
export function branchLine(s: RepoStatus): string {
  if (s.detached) return `HEAD detached at ${s.head?.slice(0, 7) ?? "?"}`;
  if (s.head === null) return `On branch ${s.branch} — no commits yet`;
  let line = `On branch ${s.branch}`;
  if (s.upstream) {
    const diverged = [s.ahead ? `ahead ${s.ahead}` : "", s.behind ? `behind ${s.behind}` : ""].filter(
      Boolean,
    );
    line += `, tracking ${s.upstream} (${diverged.length > 0 ? diverged.join(", ") : "up to date"})`;
  }
  return line;
}

/** An entry in `git status --short` form: "XY path" or "R  old -> new". */
export function shortLine(e: StatusEntry): string {
  if (e.kind === "untracked") return `?? ${e.path}`;
  const xy = `${e.index}${e.worktree}`.replaceAll(".", " ");
  return e.origPath === undefined ? `${xy} ${e.path}` : `${xy} ${e.origPath} -> ${e.path}`;
}

/** The status as the model reads it: branch line, short-format entries, counts. */
export function formatStatus(s: RepoStatus): string {
  const lines = [branchLine(s)];
  if (s.entries.length === 0) {
    lines.push(s.truncated ? "(the listing was too long to read)" : "Nothing to commit, working tree clean.");
    return lines.join("\n");
  }
  for (const e of s.entries.slice(0, MAX_LISTED)) lines.push(shortLine(e));
  if (s.entries.length > MAX_LISTED) lines.push(`… and ${s.entries.length - MAX_LISTED} more`);
  const counts = [
    `${s.staged} staged`,
    `${s.unstaged} unstaged`,
    `${s.untracked} untracked`,
    ...(s.conflicted > 0 ? [`${s.conflicted} conflicted`] : []),
  ];
  lines.push(`${counts.join(", ")}${s.truncated ? " (listing cut: too long)" : ""}.`);
  return lines.join("\n");
}

/** The text before a capture's truncation marker, so a cut listing still parses. */
export function beforeCut(text: string, truncated: boolean): string {
  if (!truncated) return text;
  const at = text.indexOf("\n…[");
  return at === -1 ? text : text.slice(0, at);
}

/** Read the repository's status. */
export async function readStatus(ctx: ToolContext): Promise<RepoStatus> {
  const r = await gitOk(ctx, ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal"], {
    maxOutputBytes: MACHINE_OUTPUT_BYTES,
  });
  const text = beforeCut(r.stdout, r.truncated);
  // The last record may be cut in half: drop it.
  return parseStatus(r.truncated ? text.slice(0, text.lastIndexOf("\0") + 1) : text, r.truncated);
}
