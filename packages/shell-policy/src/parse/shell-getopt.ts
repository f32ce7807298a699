/**
 * A generic reading of a command's options the way its getopt does, driven by an option
 * table (data in shell-wrappers.ts). One engine for every wrapper, so `--chd` means
 * `--chdir` for env exactly as it does for env itself: unique-prefix long options,
 * `--opt=value`/`--opt value`, optional arguments (only attached), short clusters
 * (`-qc cmd`, `-n10`), `--`, and permutation where the tool permutes.
 */
import { globMayBeOption } from "./shell-glob.js";
import type { ShellWord } from "./shell-words.js";

/** Whether an option takes an argument: never, always (attached or next word), or only attached. */
export type ArgKind = "none" | "required" | "optional";

/**
 * What an option means for the policy. `script`: its value is shell code; `split`: env -S
 * (the value is split into words that rejoin the argv); `stop`: nothing runs;
 * `program`: its value names a program that is run; `shell`: the command runs through a
 * shell (sudo -s), which without a command reads stdin; `replace`: xargs -I (the value marks
 * data in the command); `command-follows`: the operands are run directly as a command
 * (watch -x); `shell-follows`: the first operand is one shell string, the rest its
 * arguments (entr -s); `debugger`: a debugger command string (gdb -ex); `deny`: the
 * invocation cannot be checked (`reason` says why).
 */
export type OptionRole =
  | "script"
  | "split"
  | "stop"
  | "program"
  | "shell"
  | "replace"
  | "command-follows"
  | "shell-follows"
  | "debugger"
  /** An output file that may instead be `|cmd`/`!cmd`, a pipe to a shell command (strace -o). */
  | "output-pipe"
  | "deny";

export interface OptionSpec {
  /** Every spelling: `-k`, `--kill-after`. */
  readonly names: readonly string[];
  readonly arg?: ArgKind;
  readonly role?: OptionRole;
  /** For `deny`: why. For `replace`: the default replacement string (xargs -i → `{}`). */
  readonly note?: string;
}

export interface OptionTable {
  readonly options: readonly OptionSpec[];
  /** GNU getopt permutes (options may follow operands) unless its optstring starts with `+`. */
  readonly permute?: boolean;
  /** getopt_long_only: long options may also start with one dash (`gdb -batch`). */
  readonly longOnly?: boolean;
  /** Long options may be abbreviated to a unique prefix; true for getopt_long. */
  readonly abbreviations?: boolean;
  /** `-5` / `-n5`: a leading `-NUM` is itself an option (nice). */
  readonly numericOption?: boolean;
}

export interface ParsedOption {
  readonly spec: OptionSpec;
  /** The spelling as written (`--sig`), for messages. */
  readonly written: string;
  /** The option's value: an attached part or the next word. */
  readonly value?: ShellWord;
  readonly index: number;
}

export type GetoptResult =
  | {
      ok: true;
      options: ParsedOption[];
      /** Indices of the operand words, in order (after permutation). */
      operands: number[];
      /** Index of the first operand when parsing stopped there (no permutation), else -1. */
      stop: number;
    }
  | { ok: false; reason: string };

function derived(word: ShellWord, value: string): ShellWord {
  return { raw: word.raw, value, splits: false, glob: word.glob };
}

/** Long option lookup: exact name, else the unique option whose names have `name` as prefix. */
function findLong(
  table: OptionTable,
  name: string,
): { spec: OptionSpec } | { ambiguous: string[] } | undefined {
  for (const spec of table.options) if (spec.names.includes(name)) return { spec };
  if (table.abbreviations === false) return undefined;
  const hits = new Map<OptionSpec, string>();
  for (const spec of table.options) {
    for (const n of spec.names) if (n.startsWith("--") && n.startsWith(name)) hits.set(spec, n);
  }
  if (hits.size === 1) return { spec: [...hits.keys()][0]! };
  if (hits.size > 1) return { ambiguous: [...hits.values()] };
  return undefined;
}

function findShort(table: OptionTable, letter: string): OptionSpec | undefined {
  return table.options.find((s) => s.names.includes(`-${letter}`));
}

/**
 * Read `words[start…]` against `table`. Fails (so the caller denies) on anything the tool
 * itself might read another way: an unknown or ambiguous option, a missing value, or a word
 * in option position whose value is only known at run time (it could be an option).
 */
export function getopt(
  words: readonly ShellWord[],
  start: number,
  table: OptionTable,
  tool: string,
  posixlyCorrect = false,
): GetoptResult {
  const options: ParsedOption[] = [];
  const operands: number[] = [];
  const permute = table.permute === true && !posixlyCorrect;
  let i = start;
  const fail = (reason: string): GetoptResult => ({ ok: false, reason: `${tool}: ${reason}` });
  while (i < words.length) {
    const word = words[i]!;
    const v = word.value;
    // A run-time word whose source starts with a literal other than `-` cannot be an option.
    if (v === undefined && !word.splits && /^[A-Za-z0-9_./:=@%+,]/.test(word.raw)) {
      if (!permute) {
        for (let j = i; j < words.length; j++) operands.push(j);
        return { ok: true, options, operands, stop: i };
      }
      operands.push(i);
      i++;
      continue;
    }
    // A glob that a file name such as `-c` can satisfy (`-[c]`, `-?`, `*`) may become an option.
    if (v === undefined || globMayBeOption(word)) {
      return fail(
        `\`${word.raw}\` stands where ${tool} reads its options and is only known at run time (${word.dynamic ?? "glob or brace expansion"}), so it may be an option`,
      );
    }
    if (v === "--") {
      for (let j = i + 1; j < words.length; j++) operands.push(j);
      return { ok: true, options, operands, stop: permute ? -1 : i + 1 };
    }
    const isLong = v.startsWith("--") && v.length > 2;
    const singleLong = table.longOnly === true && !isLong && v.startsWith("-") && v.length > 2;
    if (isLong || singleLong) {
      const body = v.slice(isLong ? 2 : 1);
      const eq = body.indexOf("=");
      const name = `--${eq === -1 ? body : body.slice(0, eq)}`;
      const found = findLong(table, name);
      if (found && "ambiguous" in found) {
        return fail(`\`${v}\` is ambiguous (${found.ambiguous.join(", ")}), so ${tool} refuses it`);
      }
      if (found || !singleLong) {
        if (!found) return fail(`unknown option \`${v}\` (not in capgate's table for ${tool})`);
        const { spec } = found;
        const arg = spec.arg ?? "none";
        if (eq !== -1) {
          if (arg === "none") return fail(`\`${v}\`: ${name} takes no value`);
          options.push({ spec, written: v, value: derived(word, body.slice(eq + 1)), index: i });
          i++;
        } else if (arg === "required") {
          const next = words[i + 1];
          if (!next) return fail(`\`${v}\` needs a value`);
          if (next.splits || next.glob)
            return fail(`the value of \`${v}\` (\`${next.raw}\`) may split into several words`);
          options.push({ spec, written: v, value: next, index: i });
          i += 2;
        } else {
          options.push({ spec, written: v, index: i });
          i++;
        }
        if (spec.role === "stop") {
          for (let j = i; j < words.length; j++) operands.push(j);
          return { ok: true, options, operands, stop: i };
        }
        continue;
      }
      // getopt_long_only: no long option matched, fall through to a short cluster.
    }
    if (v.startsWith("-") && v.length > 1) {
      if (table.numericOption && /^-\d+$/.test(v)) {
        options.push({ spec: { names: ["-NUM"] }, written: v, index: i });
        i++;
        continue;
      }
      let consumedNext = false;
      for (let j = 1; j < v.length; j++) {
        const letter = v[j]!;
        const spec = findShort(table, letter);
        if (!spec)
          return fail(`unknown option \`-${letter}\` in \`${v}\` (not in capgate's table for ${tool})`);
        const arg = spec.arg ?? "none";
        const rest = v.slice(j + 1);
        if (arg === "none") {
          options.push({ spec, written: `-${letter}`, index: i });
          if (spec.role === "stop") {
            for (let k = i + 1; k < words.length; k++) operands.push(k);
            return { ok: true, options, operands, stop: i + 1 };
          }
          continue;
        }
        if (rest !== "") {
          options.push({ spec, written: `-${letter}`, value: derived(word, rest), index: i });
        } else if (arg === "required") {
          const next = words[i + 1];
          if (!next) return fail(`\`-${letter}\` needs a value`);
          if (next.splits || next.glob)
            return fail(`the value of \`-${letter}\` (\`${next.raw}\`) may split into several words`);
          options.push({ spec, written: `-${letter}`, value: next, index: i });
          consumedNext = true;
        } else {
          options.push({ spec, written: `-${letter}`, index: i });
        }
        break;
      }
      i += consumedNext ? 2 : 1;
      continue;
    }
    // An operand.
    if (!permute) {
      for (let j = i; j < words.length; j++) operands.push(j);
      return { ok: true, options, operands, stop: i };
    }
    operands.push(i);
    i++;
  }
  return { ok: true, options, operands, stop: permute ? -1 : words.length };
}
