/**
 * Join argv words into one POSIX shell command line that a shell splits back into exactly
 * those words (each quoted with '…' when needed). Use it to put a spawn-style command
 * (`file` + `args`, e.g. an MCP server command) through the shell policy:
 * `shellPolicyCheck(shellQuote([file, ...args]), ctx)`.
 */
export function shellQuote(words: readonly string[]): string {
  return words.map(quoteWord).join(" ");
}

function quoteWord(word: string): string {
  if (word === "") return "''";
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
