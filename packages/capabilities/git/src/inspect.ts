import { truncateMiddle } from "@capgate/schema";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { gitPath } from "./paths.js";
import { checkRefText, refHint, resolveRevision } from "./refs.js";
import { git, gitFailure, gitOk } from "./run-git.js";
import { beforeCut, MACHINE_OUTPUT_BYTES } from "./status.js";

/** Room kept in a summary for its header lines. */
const HEADER_BYTES = 1_024;
export const DEFAULT_LOG_LIMIT = 20;
const DIFF_OPTIONS = ["--no-color", "--no-ext-diff", "--no-textconv"];

export interface DiffFile {
  path: string;
  origPath?: string;
  added: number | null;
  deleted: number | null;
  binary: boolean;
}

/** Parse `git diff --numstat -z`. */
export function parseNumstat(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  const records = text.split("\0");
  for (let i = 0; i < records.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(records[i]!);
    if (!m) continue;
    const binary = m[1] === "-";
    const file: DiffFile = {
      path: m[3]!,
      added: binary ? null : Number(m[1]),
      deleted: binary ? null : Number(m[2]),
      binary,
    };
    if (m[3] === "") {
      // A rename: "A\tD\t\0old\0new".
      file.origPath = records[++i] ?? "";
      file.path = records[++i] ?? "";
    }
    files.push(file);
  }
  return files;
}

/** Bytes left for output under `header` in a summary. */
function room(ctx: ToolContext, header: string): number {
  return Math.max(512, ctx.limits.outputBytes - HEADER_BYTES - Buffer.byteLength(header));
}

/**
 * Text that must fit under `header`. Output that git wrote is captured within `room` in the
 * first place (so its one truncation marker counts the real loss); this only cuts text we
 * built ourselves.
 */
function fit(text: string, ctx: ToolContext, header: string): string {
  return truncateMiddle(text, room(ctx, header)).text;
}

export async function diff(args: { path?: string; staged?: boolean }, ctx: ToolContext): Promise<ToolResult> {
  const spec = args.path === undefined ? [] : ["--", await gitPath(ctx, args.path, "path")];
  const staged = args.staged === true;
  const base = ["diff", ...DIFF_OPTIONS, ...(staged ? ["--cached"] : [])];
  const numstat = await gitOk(ctx, [...base, "--numstat", "-z", ...spec], {
    maxOutputBytes: MACHINE_OUTPUT_BYTES,
  });
  const files = parseNumstat(beforeCut(numstat.stdout, numstat.truncated));
  const what = staged ? "Staged changes (index vs HEAD)" : "Unstaged changes (working tree vs index)";
  const under = args.path === undefined ? "" : ` under ${args.path}`;
  if (files.length === 0) {
    return { success: true, summary: await noChanges(ctx, staged, under), data: { staged, files } };
  }
  const added = files.reduce((n, f) => n + (f.added ?? 0), 0);
  const deleted = files.reduce((n, f) => n + (f.deleted ?? 0), 0);
  const header = `${what}${under}: ${files.length} file${files.length === 1 ? "" : "s"}, +${added} -${deleted}\n`;
  const patch = await gitOk(ctx, [...base, "--stat=120", "--patch", ...spec], {
    maxOutputBytes: room(ctx, header),
  });
  return {
    success: true,
    summary: header + fit(patch.stdout.trimEnd(), ctx, header),
    data: { staged, files, added, deleted, truncated: patch.truncated },
  };
}

/** "No changes" plus what the model most likely wanted instead. */
async function noChanges(ctx: ToolContext, staged: boolean, under: string): Promise<string> {
  if (staged) {
    return `No staged changes${under}: nothing would be committed. Stage files with git.add; git.diff without staged shows unstaged changes.`;
  }
  const cached = await git(ctx, ["diff", ...DIFF_OPTIONS, "--cached", "--quiet"]);
  const hint =
    cached.exitCode === 1 ? ' There are staged changes: git.diff {"staged": true} shows them.' : "";
  return `No unstaged changes${under} (the working tree matches the index).${hint} New, untracked files are not diffed; git.status lists them.`;
}

export interface LogEntry {
  hash: string;
  short: string;
  author: string;
  email: string;
  date: string;
  subject: string;
}

const LOG_FORMAT = "--format=%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%s%x1e";

export function parseLog(text: string): LogEntry[] {
  return text
    .split("\x1e")
    .map((r) => r.replace(/^\n/, ""))
    .filter(Boolean)
    .map((r) => {
      const [hash = "", short = "", author = "", email = "", date = "", subject = ""] = r.split("\x1f");
      return { hash, short, author, email, date, subject };
    });
}

export async function log(args: { limit?: number; path?: string }, ctx: ToolContext): Promise<ToolResult> {
  const limit = args.limit ?? DEFAULT_LOG_LIMIT;
  const spec = args.path === undefined ? [] : ["--", await gitPath(ctx, args.path, "path")];
  // One more than asked, to know whether there are more.
  const r = await git(ctx, ["log", "--no-color", `--max-count=${limit + 1}`, LOG_FORMAT, ...spec], {
    maxOutputBytes: MACHINE_OUTPUT_BYTES,
  });
  if (r.exitCode !== 0) {
    if (/does not have any commits yet/.test(r.stderr)) {
      return {
        success: true,
        summary: "No commits yet: the current branch has no history.",
        data: { commits: [] },
      };
    }
    throw gitFailure(["log"], r);
  }
  const all = parseLog(beforeCut(r.stdout, r.truncated));
  const commits = all.slice(0, limit);
  const under = args.path === undefined ? "" : ` touching ${args.path}`;
  if (commits.length === 0) return { success: true, summary: `No commits${under}.`, data: { commits } };
  const more = all.length > limit ? `\n(more commits exist; raise limit to see them)` : "";
  const header = `${commits.length} commit${commits.length === 1 ? "" : "s"}${under}, newest first:\n`;
  const lines = commits.map(
    (c) => `${c.short} ${c.date.slice(0, 10)} ${c.author}: ${c.subject.slice(0, 200)}`,
  );
  return {
    success: true,
    summary: header + fit(lines.join("\n"), ctx, header) + more,
    data: { commits, more: all.length > limit },
  };
}

export async function show(args: { ref: string }, ctx: ToolContext): Promise<ToolResult> {
  checkRefText(args.ref, "ref");
  const oid = await resolveRevision(ctx, args.ref);
  if (!oid) {
    const what = args.ref.includes(":")
      ? `'${args.ref}' names no file at that revision (REV:path, the path relative to the repository root), or the revision does not exist.`
      : `'${args.ref}' does not name a commit, branch or tag here.`;
    return { success: false, summary: what + (await refHint(ctx, args.ref)) };
  }
  const type = (await gitOk(ctx, ["cat-file", "-t", oid])).stdout.trim();
  if (type === "blob") return showBlob(args.ref, oid, ctx);
  const header = type === "commit" ? "" : `${args.ref} is a ${type} (${oid.slice(0, 12)}):\n`;
  const showArgs = [
    "show",
    ...DIFF_OPTIONS,
    "--stat=120",
    "--patch",
    "--format=medium",
    "--end-of-options",
    oid,
  ];
  const r = await gitOk(ctx, showArgs, { maxOutputBytes: room(ctx, header) });
  return {
    success: true,
    summary: header + fit(r.stdout.trimEnd(), ctx, header),
    data: { ref: args.ref, oid, type, truncated: r.truncated },
  };
}

async function showBlob(ref: string, oid: string, ctx: ToolContext): Promise<ToolResult> {
  const size = Number((await gitOk(ctx, ["cat-file", "-s", oid])).stdout.trim());
  const header = `${ref} (${size} bytes):\n`;
  const r = await gitOk(ctx, ["cat-file", "blob", oid], { maxOutputBytes: room(ctx, header) });
  const data = { ref, oid, type: "blob", size };
  if (r.stdout.slice(0, 8_000).includes("\0")) {
    return {
      success: true,
      summary: `${ref}: binary file, ${size} bytes (not shown).`,
      data: { ...data, binary: true },
    };
  }
  return { success: true, summary: header + fit(r.stdout, ctx, header), data: { ...data, binary: false } };
}
