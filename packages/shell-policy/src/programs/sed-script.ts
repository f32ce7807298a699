/**
 * GNU sed scripts read command by command, so the policy knows for certain whether a
 * script runs anything: the `e` command and the `e` flag of `s` hand text to a shell. A
 * script is read the way sed's compiler reads it — addresses, `!`, the command letter and
 * that letter's own argument (text, a label, a file name, the parts of `s` and `y`) — and
 * anything it cannot place is reported as unreadable rather than guessed. `w`/`W`/`r`/`R`
 * only read or write files (as a redirection would) and run nothing.
 */

/** Commands that take no argument (or only a number: `q 5`, `l 40`). */
const PLAIN = new Set([
  "=",
  "d",
  "D",
  "g",
  "G",
  "h",
  "H",
  "l",
  "L",
  "n",
  "N",
  "p",
  "P",
  "x",
  "z",
  "F",
  "q",
  "Q",
]);
/** Commands whose argument runs to the end of the line. */
const TO_EOL = new Set(["r", "R", "w", "W", "v"]);
/** Commands whose argument is a label, ended by `;` or a newline. */
const LABEL = new Set([":", "b", "t", "T"]);

/** Why a sed script cannot be read completely, or undefined when it runs no command. */
export function sedScriptRuns(script: string): string | undefined {
  let i = 0;
  const n = script.length;
  const at = () => script[i];
  const skipBlanks = () => {
    while (i < n && (script[i] === " " || script[i] === "\t")) i++;
  };
  const toEol = () => {
    while (i < n && script[i] !== "\n") i++;
  };
  /** A delimited part (`/re/`, the pieces of `s`), `\` escaping the next character; false when unterminated. */
  const delimited = (delim: string): boolean => {
    while (i < n) {
      const c = script[i]!;
      if (c === "\\") {
        i += 2;
        continue;
      }
      if (c === delim) {
        i++;
        return true;
      }
      if (c === "\n" && delim !== "\n") return false;
      i++;
    }
    return false;
  };
  const address = (): boolean => {
    const c = at();
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      while (i < n && /[0-9~]/.test(script[i]!)) i++;
      return true;
    }
    if (c === "$") {
      i++;
      return true;
    }
    if (c === "/" || c === "\\") {
      const delim = c === "/" ? "/" : script[i + 1];
      if (delim === undefined || delim === "\n") return false;
      i += c === "/" ? 1 : 2;
      if (!delimited(delim)) return false;
      while (i < n && /[IM]/.test(script[i]!)) i++;
      return true;
    }
    return true;
  };
  while (i < n) {
    const c = script[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === ";" || c === "}") {
      i++;
      continue;
    }
    if (c === "#") {
      toEol();
      continue;
    }
    if (!address()) return "a sed address is unterminated";
    skipBlanks();
    if (at() === ",") {
      i++;
      skipBlanks();
      if (at() === "+" || at() === "~") i++;
      if (!address()) return "a sed address is unterminated";
    }
    skipBlanks();
    while (at() === "!") {
      i++;
      skipBlanks();
    }
    const cmd = at();
    if (cmd === undefined) return "a sed address has no command";
    i++;
    if (cmd === "{") continue;
    if (cmd === "e") return "the sed `e` command runs its argument (or the pattern space) as a shell command";
    if (PLAIN.has(cmd)) {
      skipBlanks();
      while (i < n && /[0-9]/.test(script[i]!)) i++;
      continue;
    }
    if (TO_EOL.has(cmd)) {
      toEol();
      continue;
    }
    if (LABEL.has(cmd)) {
      while (i < n && script[i] !== "\n" && script[i] !== ";") i++;
      continue;
    }
    if (cmd === "a" || cmd === "i" || cmd === "c") {
      // Text to the end of the line; a trailing backslash continues it on the next.
      while (i < n) {
        if (script[i] === "\\") i += 2;
        else if (script[i] === "\n") break;
        else i++;
      }
      continue;
    }
    if (cmd === "s" || cmd === "y") {
      const delim = at();
      if (delim === undefined || delim === "\n" || delim === "\\")
        return `a sed \`${cmd}\` command has no delimiter`;
      i++;
      if (!delimited(delim) || !delimited(delim)) return `a sed \`${cmd}\` command is unterminated`;
      if (cmd === "y") continue;
      for (;;) {
        const f = at();
        if (f === undefined || f === "\n" || f === ";" || f === "}" || f === " " || f === "\t" || f === "#")
          break;
        if (f === "e") return "the `e` flag of a sed `s` command runs the pattern space as a shell command";
        if (f === "w") {
          toEol();
          break;
        }
        if (!/[gpiImM0-9]/.test(f)) return `\`${f}\` is not a flag of sed's \`s\` command capgate knows`;
        i++;
      }
      continue;
    }
    return `\`${cmd}\` is not a sed command capgate knows`;
  }
  return undefined;
}

/** GNU sed's options that take a value as the next word (or attached). */
const VALUE_SHORT = new Set(["e", "f", "l"]);
const LONG_VALUE = ["--expression", "--file", "--line-length"];
const LONG_FLAGS = [
  "--quiet",
  "--silent",
  "--debug",
  "--follow-symlinks",
  "--in-place",
  "--posix",
  "--regexp-extended",
  "--separate",
  "--sandbox",
  "--unbuffered",
  "--null-data",
  "--zero-terminated",
  "--help",
  "--version",
  "--binary",
];

/**
 * Why a `sed` command line cannot be read completely: a script that runs commands, a script
 * from standard input, an option capgate does not know. Scripts in files (`-f prog.sed`) are
 * files (docs/shell-policy.md §8). `--sandbox` makes sed refuse `e`, `r` and `w` itself.
 */
export function sedCommandRuns(argv: readonly (string | undefined)[]): string | undefined {
  const scripts: string[] = [];
  let sawScript = false;
  let sandbox = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) return "a sed argument is only known at run time";
    if (a === "--") {
      i++;
      break;
    }
    if (a.startsWith("--")) {
      const name = a.replace(/=.*$/s, "");
      const long = [...LONG_VALUE, ...LONG_FLAGS].filter((o) => o.startsWith(name));
      const exact = long.includes(name) ? [name] : long;
      if (exact.length !== 1) return `\`${a}\` is not a sed option capgate knows`;
      const opt = exact[0]!;
      if (opt === "--sandbox") sandbox = true;
      if (!LONG_VALUE.includes(opt)) continue;
      const value = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      if (value === undefined) return `the value of sed ${opt} is only known at run time`;
      sawScript ||= opt !== "--line-length";
      if (opt === "--expression") scripts.push(value);
      if (opt === "--file" && isStdin(value)) return "sed would read its script from standard input";
      continue;
    }
    if (a.startsWith("-") && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const letter = a[j]!;
        if (letter === "i") break; // -i[SUFFIX]: the rest is the suffix
        if (VALUE_SHORT.has(letter)) {
          const value = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
          if (value === undefined) return `the value of sed -${letter} is only known at run time`;
          if (letter === "e") scripts.push(value);
          if (letter === "f" && isStdin(value)) return "sed would read its script from standard input";
          sawScript ||= letter !== "l";
          break;
        }
        if (!"nrEsuzb".includes(letter)) return `\`-${letter}\` is not a sed option capgate knows`;
      }
      continue;
    }
    if (!sawScript) {
      scripts.push(a);
      sawScript = true;
    }
  }
  if (!sawScript && i < argv.length) {
    const a = argv[i];
    if (a === undefined) return "the sed script is only known at run time";
    scripts.push(a);
  }
  if (sandbox) return undefined;
  return sedScriptRuns(scripts.join("\n"));
}

function isStdin(path: string): boolean {
  return path === "-" || /^\/+(dev\/+(stdin|fd\/)|proc\/)/.test(path);
}
