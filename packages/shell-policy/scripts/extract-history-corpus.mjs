/**
 * Builds the shell-history corpus for the false-ask measurement (test/false-ask.test.ts) from
 * git copies of the public repositories listed in test/corpus/history-sources.tsv: each
 * history as committed at the listed commit, zsh's extended format (`: time:0;cmd`) and
 * continuation lines undone, the most recent MAX_PER_HISTORY entries of each (so that one
 * long history does not stand for everyone), lines that look like credentials left out.
 * Repeated commands stay repeated: the corpus is weighted by how often commands were typed.
 *
 *   node packages/shell-policy/scripts/extract-history-corpus.mjs MIRROR_DIR
 *
 * MIRROR_DIR holds one git directory per repository, named `owner+name` (a bare repository
 * or a clone; `MIRROR_DIR/owner+name/repo` or `…/repo/.git` are found too). The output,
 * test/corpus/local/histories.txt (`repository<TAB>command` lines), is not committed: the
 * histories are personal records without a licence that allows redistribution.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const MAX_PER_HISTORY = 5000;
const [mirrors] = process.argv.slice(2);
if (!mirrors) {
  process.stderr.write("usage: extract-history-corpus.mjs MIRROR_DIR\n");
  process.exit(2);
}
const corpusDir = join(import.meta.dirname, "..", "test", "corpus");
const sources = readFileSync(join(corpusDir, "history-sources.tsv"), "utf8")
  .split("\n")
  .filter((l) => l !== "" && !l.startsWith("#"))
  .map((l) => {
    const [repo, commit, path, licence] = l.split("\t");
    return { repo, commit, path, licence };
  });

function gitDir(repo) {
  const base = join(mirrors, repo.replace("/", "+"));
  for (const dir of [join(base, "repo", ".git"), join(base, "repo"), join(base, ".git"), base])
    if (existsSync(join(dir, "HEAD"))) return dir;
  throw new Error(`no git directory for ${repo} under ${mirrors}`);
}

/** Credentials and secrets a history may hold: such lines are dropped, not masked. */
const SECRET =
  /pass(word|wd)?\b|passwd|secret|token|api[_-]?key|authorization:|bearer |private[_-]?key|BEGIN [A-Z ]*KEY|ghp_|gho_|sk-[A-Za-z0-9]{10}|AKIA[0-9A-Z]{12}|[A-Za-z0-9+/_-]{40,}|:\/\/[^/\s:@]+:[^/\s@]+@/i;

function entries(text) {
  const out = [];
  let pending;
  for (let line of text.split("\n")) {
    line = line.replace(/\r$/, "");
    if (pending === undefined) {
      const zsh = /^: \d+:\d+;(.*)$/s.exec(line);
      if (zsh) line = zsh[1];
      else if (/^#\d+$/.test(line)) continue; // bash HISTTIMEFORMAT stamps
    }
    const joined = pending === undefined ? line : `${pending}\n${line}`;
    // zsh stores a multi-line command with a backslash before each newline.
    if (/(^|[^\\])(\\\\)*\\$/.test(line)) {
      pending = joined.slice(0, -1);
      continue;
    }
    pending = undefined;
    const command = joined.trim();
    if (command !== "") out.push(command);
  }
  return out;
}

const lines = [];
let dropped = 0;
for (const { repo, commit, path } of sources) {
  const text = execFileSync("git", ["--git-dir", gitDir(repo), "show", `${commit}:${path}`], {
    encoding: "latin1",
    maxBuffer: 1 << 28,
  });
  const all = entries(Buffer.from(text, "latin1").toString("utf8"));
  for (const command of all.slice(-MAX_PER_HISTORY)) {
    if (
      SECRET.test(command) ||
      command.includes("\t") ||
      command.includes("\n") ||
      [...command].some((c) => c.charCodeAt(0) < 9)
    ) {
      dropped++;
      continue;
    }
    lines.push(`${repo}\t${command}`);
  }
}

const header = [
  "# Everyday commands as typed: public shell histories (test/corpus/history-sources.tsv names each",
  "# repository, commit and path), the most recent " +
    MAX_PER_HISTORY +
    " entries of each, lines that look like credentials",
  "# left out. Built by packages/shell-policy/scripts/extract-history-corpus.mjs; not for redistribution.",
];
mkdirSync(join(corpusDir, "local"), { recursive: true });
const out = join(corpusDir, "local", "histories.txt");
writeFileSync(out, `${header.join("\n")}\n${lines.join("\n")}\n`);
process.stdout.write(
  `${lines.length} commands from ${sources.length} histories (${dropped} left out) → ${out}\n`,
);
