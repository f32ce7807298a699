/**
 * Builds the everyday-command corpus (test/corpus/tldr-common.txt) from a checkout of the
 * tldr pages (https://github.com/tldr-pages/tldr, CC BY 4.0): every example command line of
 * `pages/common/*.md`, with the `{{placeholders}}` filled by their own text, one
 * `page<TAB>command` line each. The false-ask test (test/false-ask.test.ts) measures the
 * configured-rule policy on it.
 *
 *   node packages/shell-policy/scripts/extract-tldr-corpus.mjs /path/to/tldr/.git [commit]
 *
 * Reads the pages with git (a bare repository is enough), so the corpus names the commit
 * it came from.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const [gitDir, rev = "HEAD"] = process.argv.slice(2);
if (!gitDir) {
  process.stderr.write("usage: extract-tldr-corpus.mjs TLDR_GIT_DIR [COMMIT]\n");
  process.exit(2);
}
const git = (...args) =>
  execFileSync("git", ["--git-dir", gitDir, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
const commit = git("rev-parse", rev).trim();
const date = git("show", "-s", "--format=%cs", commit).trim();

/**
 * A placeholder's text as a plausible value: `{{path/to/file}}` → `path/to/file`,
 * `{{[-r|--recursive]}}` → `-r` (the first spelling), `{{f|d}}` → `f`, `{{a b ...}}` → `a b`.
 */
function fillPlaceholder(inner) {
  let text = inner.replace(/\[([^\]|]*)\|[^\]]*\]/g, "$1");
  // Top-level alternatives outside brackets: the first one.
  if (text.includes("|") && !/[\s'"]/.test(text)) text = text.split("|")[0];
  return text.replace(/\s*\.\.\.$/, "").replace(/\s+\.\.\.\s+/g, " ");
}

const lines = [];
const pages = git("ls-tree", "--name-only", commit, "pages/common/")
  .split("\n")
  .filter((p) => p.endsWith(".md"))
  .sort();
for (const path of pages) {
  const page = path.slice("pages/common/".length, -".md".length);
  const text = git("show", `${commit}:${path}`);
  for (const m of text.matchAll(/^`(.+)`$/gm)) {
    // Key sequences of interactive programs (`<Ctrl r>`), not command lines.
    if (/^<[^>]+>/.test(m[1])) continue;
    const command = m[1].replace(/\{\{(.*?)\}\}/g, (_all, inner) => fillPlaceholder(inner));
    if (command.includes("\t") || command.includes("\n")) continue;
    // Alias pages (`tldr git-co` for `git-checkout`) point at another page; they are no command.
    if (command.startsWith("tldr ") && page !== "tldr") continue;
    lines.push(`${page}\t${command}`);
  }
}

const header = [
  "# Everyday commands: every example of the tldr pages' pages/common, placeholders filled with their own text.",
  `# Source: https://github.com/tldr-pages/tldr at commit ${commit} (${date}).`,
  "# Licence: Creative Commons Attribution 4.0 International (CC BY 4.0), © the tldr-pages team and contributors;",
  "#   https://creativecommons.org/licenses/by/4.0/ — the command lines are unchanged but for the filled placeholders.",
  "# Built by packages/shell-policy/scripts/extract-tldr-corpus.mjs; one `page<TAB>command` per line.",
];
const out = join(import.meta.dirname, "..", "test", "corpus", "tldr-common.txt");
writeFileSync(out, `${header.join("\n")}\n${lines.join("\n")}\n`);
process.stdout.write(`${lines.length} commands from ${pages.length} pages → ${out}\n`);
