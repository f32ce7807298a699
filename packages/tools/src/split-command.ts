import { CapgateError } from "@capgate/schema";
import { loadBashParser } from "./shell-syntax.js";

/**
 * Split a command line into argv the way the shell would, without running a shell: for
 * spawning a program directly (an MCP server's `--command "npx server --flag"`). Only a
 * single simple command of literal words is accepted — operators, redirections,
 * expansions, substitutions and globs are refused, since nothing would evaluate them.
 * @throws CapgateError `invalid_command` naming what cannot be split.
 */
export async function splitCommandLine(line: string, property = "command"): Promise<string[]> {
  const text = line.trim();
  if (text === "") throw new CapgateError("invalid_command", "The command line is empty.", { property });
  const parser = await loadBashParser();
  const parsed = parser.parse(text);
  if (!parsed.ok)
    throw new CapgateError("invalid_command", `The command line cannot be parsed: ${parsed.error}.`, {
      property,
    });
  const [first, ...others] = parsed.commands;
  if (!first || others.length > 0 || parsed.unresolvable.length > 0 || first.text.trim() !== text) {
    throw new CapgateError(
      "invalid_command",
      `'${text}' is not a single plain command: pipes, ';', '&&', redirections and substitutions are not run here. Give the program and its arguments only.`,
      { property },
    );
  }
  if (first.words.length > 0 && !text.startsWith(first.words[0]?.raw ?? "")) {
    throw new CapgateError(
      "invalid_command",
      `'${text}' starts with a variable assignment; set environment variables in the server's "env" instead.`,
      { property },
    );
  }
  const argv: string[] = [];
  for (const word of first.words) {
    if (word.value === undefined || word.splits || word.glob) {
      throw new CapgateError(
        "invalid_command",
        `'${word.raw}' in the command line depends on a shell (${word.dynamic ?? "expansion or glob"}); write the literal value.`,
        { property },
      );
    }
    argv.push(word.value);
  }
  if (argv.length === 0)
    throw new CapgateError("invalid_command", "The command line names no program.", { property });
  return argv;
}
