/** One error as a terminal shows it: one line, at most one hint. */
export interface ErrorReport {
  code: string;
  message: string;
  property?: string;
  hint?: string;
  /** Every problem, each at its own property (config errors). */
  problems?: Array<{ property: string; message: string }>;
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  property?: unknown;
  problems?: unknown;
  hint?: unknown;
}

const flat = (text: string) => text.replace(/\s*\n\s*/g, " ").trim();

/**
 * Anything thrown, as one line: a capgate error (a `code` in snake_case) keeps its code,
 * property and `hint`; a config error with several problems names each at its own property
 * (`modle: unexpected property…; approval: must be one of…`), never one problem's message
 * tagged with another's property; anything else is `internal`.
 */
export function describeError(error: unknown): ErrorReport {
  const e = (typeof error === "object" && error !== null ? error : {}) as ErrorLike;
  if (typeof e.code !== "string" || typeof e.message !== "string" || !/^[a-z][a-z0-9_]*$/.test(e.code))
    return { code: "internal", message: flat(error instanceof Error ? error.message : String(error)) };
  const problems = Array.isArray(e.problems)
    ? (e.problems as Array<{ property?: string; path?: string; message?: string }>)
    : [];
  if (e.code === "invalid_config" && problems.length > 0) {
    const source = /^(.*?) is invalid/.exec(e.message)?.[1] ?? "the config";
    const syntax =
      problems.length === 1 ? /^not valid JSON (.*)$/.exec(String(problems[0]?.message ?? "")) : null;
    if (syntax)
      return {
        code: e.code,
        message: `${source} is not valid JSON ${flat(syntax[1] ?? "")}`,
        hint: "JSON allows no trailing commas or comments; keys and strings take double quotes",
      };
    const list = problems
      .map((p) => `${p.property || p.path || "(root)"}: ${flat(String(p.message ?? ""))}`)
      .join("; ");
    return {
      code: e.code,
      message: `${source} is invalid — ${list}`,
      ...(problems.length === 1 && problems[0]?.property ? { property: problems[0].property } : {}),
      problems: problems.map((p) => ({
        property: p.property || p.path || "",
        message: flat(String(p.message ?? "")),
      })),
      hint: "the config's JSON Schema is @capgate/harness/config.schema.json (editors complete it via $schema)",
    };
  }
  const property = typeof e.property === "string" && e.property !== "" ? e.property : undefined;
  const hint = typeof e.hint === "string" && e.hint !== "" ? e.hint : undefined;
  return {
    code: e.code,
    message: flat(e.message),
    ...(property ? { property } : {}),
    ...(hint ? { hint } : {}),
  };
}
