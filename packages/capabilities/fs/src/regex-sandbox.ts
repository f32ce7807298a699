import { createContext, Script } from "node:vm";
import { InvalidArgumentsError } from "@capgate/tools";

/** One matching line: index of the text in the batch, 1-based line, 0-based column, the line. */
export type LineMatch = [text: number, line: number, column: number, content: string];

/**
 * Compile `pattern` as fs.search does (a JavaScript RegExp, case-sensitive, no flags) or
 * throw `invalid_arguments` naming `pattern`, with the engine's reason.
 */
export function checkPattern(pattern: string): void {
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new InvalidArgumentsError(
      `\`pattern\` ${JSON.stringify(pattern)} is not a valid JavaScript regular expression: ${(error as Error).message}. Escape special characters such as ( [ . * + ? with a backslash to match them literally.`,
      { property: "pattern", cause: error },
    );
  }
}

// Runs inside the vm context: the pattern and each batch arrive as context globals.
const MATCHER_SOURCE = `
var __re = new RegExp(__pattern);
function __match(texts, max) {
  var out = [];
  for (var t = 0; t < texts.length; t++) {
    var text = texts[t];
    var line = 1;
    var start = 0;
    while (start <= text.length) {
      var nl = text.indexOf("\\n", start);
      var end = nl === -1 ? text.length : nl;
      if (end > start || nl !== -1) {
        var content = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
        var m = __re.exec(content);
        if (m !== null) {
          out.push([t, line, m.index, content]);
          if (out.length >= max) return out;
        }
      }
      if (nl === -1) break;
      start = nl + 1;
      line++;
    }
  }
  return out;
}
`;
const BATCH_SCRIPT = new Script("__match(__texts, __max)", { filename: "fs-search-batch.js" });

/**
 * Matches lines against a model-supplied regex under a time budget. A catastrophic
 * pattern such as `(a+)+$` would otherwise block the event loop forever — no timeout or
 * abort could interrupt a synchronous RegExp — so matching runs in a `node:vm` context
 * whose `timeout` terminates it. The context holds nothing but the pattern; it is not a
 * security boundary, only a way to stop a runaway regex. Work is batched so the per-call
 * overhead of the watchdog (~50 µs) is paid once per batch, not per file.
 */
export class RegexSandbox {
  readonly #context: object;
  #remainingMs: number;

  constructor(pattern: string, budgetMs: number) {
    checkPattern(pattern);
    this.#context = createContext({ __pattern: pattern, __texts: [], __max: 0 });
    new Script(MATCHER_SOURCE, { filename: "fs-search-matcher.js" }).runInContext(this.#context);
    this.#remainingMs = Math.max(1, Math.floor(budgetMs));
  }

  /** Milliseconds of matching time left. */
  get remainingMs(): number {
    return this.#remainingMs;
  }

  /**
   * Matching lines of `texts`, at most `max`; `timedOut` when the budget ran out during
   * this batch (its matches are then lost and the search should stop).
   */
  match(texts: readonly string[], max: number): { matches: LineMatch[]; timedOut: boolean } {
    if (this.#remainingMs <= 0) return { matches: [], timedOut: true };
    const ctx = this.#context as { __texts: readonly string[]; __max: number };
    ctx.__texts = texts;
    ctx.__max = max;
    const started = performance.now();
    try {
      const timeout = Math.max(1, Math.ceil(this.#remainingMs)); // vm wants a whole number
      const raw = BATCH_SCRIPT.runInContext(this.#context, { timeout }) as LineMatch[];
      // Copy out of the context's realm into plain arrays of this one.
      return { matches: raw.map((m) => [m[0], m[1], m[2], m[3]]), timedOut: false };
    } catch (error) {
      if ((error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
        this.#remainingMs = 0;
        return { matches: [], timedOut: true };
      }
      throw error;
    } finally {
      ctx.__texts = [];
      this.#remainingMs -= performance.now() - started;
    }
  }
}
