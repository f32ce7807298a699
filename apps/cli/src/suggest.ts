import { CliError, ExitCode } from "./errors.js";

/**
 * "did you mean …?" for any name a user types (profile, tool, capability, command):
 * the closest known name by edit distance, or the list when nothing is close.
 */
export async function suggestionHint(name: string, known: readonly string[]): Promise<string> {
  const { closestMatch } = await import("@capgate/schema");
  const guess = closestMatch(name, [...known]);
  return guess ? `did you mean '${guess}'?` : `known: ${known.join(", ")}`;
}

/** A rejected unknown name (exit 2) with its did-you-mean hint. */
export async function unknownName(
  kind: string,
  name: string,
  known: readonly string[],
  code = `unknown_${kind}`,
): Promise<CliError> {
  return new CliError(`no ${kind} named '${name}'`, ExitCode.rejected, await suggestionHint(name, known), {
    code,
    property: kind,
  });
}
