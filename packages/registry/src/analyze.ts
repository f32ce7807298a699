import { stemmer } from "stemmer";
import { STOP_WORDS } from "./stop-words.js";

/**
 * Text analysis shared by every ranked index in capgate (capability search and memory
 * search), so a query means the same thing wherever it is asked.
 *
 * Pipeline: split identifiers (`fs.read`, `read_file`, `readFile`, `server/tool`,
 * `HTTPServer`) and prose on anything that is not a letter or digit, lowercase, drop
 * English stop words, stem (Porter, cut to 6 characters: "files" → "file", "reading" → "read",
 * "financial" → "financ").
 */

/** Split camelCase and PascalCase humps: `readFile` → `read File`, `HTTPServer` → `HTTP Server`. */
function splitHumps(text: string): string {
  return text.replace(LOWER_UPPER, "$1 $2").replace(UPPER_UPPER_LOWER, "$1 $2");
}

// Module constants, not literals in the functions: the build lowers a \p{…} literal to
// `new RegExp(…)`, which would make a new object on every call (a tenth of a registry build).
const LOWER_UPPER = /(\p{Ll}|\p{N})(\p{Lu})/gu;
const UPPER_UPPER_LOWER = /(\p{Lu})(\p{Lu}\p{Ll})/gu;
const ALL_DIGITS = /^\p{N}+$/u;
const ALL_LETTERS = /^\p{L}+$/u;
const NON_WORD = /[^\p{L}\p{N}]+/u;
const HUMP = /(\p{Ll}|\p{N})\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u;
const LETTER_DIGIT = /\p{L}\p{N}|\p{N}\p{L}/u;
const LETTER_RUNS = /\p{L}{2,}/gu;

/**
 * Lowercased word tokens of any text, identifiers split on `.`, `_`, `-`, `/`, `:` and
 * camelCase. A word that camelCase splits is also kept whole, after its parts: `MySQL` →
 * `my sql mysql`, `GitHub` → `git hub github`, `readFile` → `read file readfile`. So a
 * brand written in camel case meets the same brand in an identifier (`azure_mysql_list`
 * indexes `mysql`), whichever side it is on: documents and queries go through this same
 * function.
 */
export function tokenize(text: string): string[] {
  if (isAscii(text)) return tokenizeAscii(text);
  const out: string[] = [];
  for (const word of text.split(NON_WORD)) {
    if (word === "") continue;
    pushWord(out, word);
  }
  return out;
}

/** One word's tokens (a word: a maximal run of letters and digits). */
function pushWord(out: string[], word: string): void {
  if (!HUMP.test(word)) {
    pushWithLetterRuns(out, word.toLowerCase());
    return;
  }
  for (const piece of splitHumps(word).split(" "))
    if (piece !== "") pushWithLetterRuns(out, piece.toLowerCase());
  pushWithLetterRuns(out, word.toLowerCase());
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

// ASCII character classes: in ASCII, \p{L} is exactly A–Z and a–z, \p{N} exactly 0–9.
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isUpper = (c: number): boolean => c >= 65 && c <= 90;
const isLower = (c: number): boolean => c >= 97 && c <= 122;
const isLetter = (c: number): boolean => isUpper(c) || isLower(c);

/**
 * `tokenize` for ASCII text (nearly every manifest and query): the same tokens from a scan
 * of character codes instead of a split on a Unicode regular expression, which allocates
 * about a kilobyte per text beyond its tokens (a registration tokenizes every text twice,
 * for the lexical indexes and for word vectors, and its young-generation collections are
 * a large part of its time). A camelCase word still goes through `pushWord`'s regular expressions.
 */
function tokenizeAscii(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (!isLetter(c) && !isDigit(c)) {
      i++;
      continue;
    }
    const start = i;
    let hump = false;
    let upper = false;
    let letterDigit = false;
    for (; i < n; i++) {
      c = text.charCodeAt(i);
      const letter = isLetter(c);
      if (!letter && !isDigit(c)) break;
      if (i > start) {
        const prev = text.charCodeAt(i - 1);
        // HUMP: (\p{Ll}|\p{N})\p{Lu}, or \p{Lu}\p{Lu}\p{Ll} (seen at its last letter).
        if (isUpper(c) && (isLower(prev) || isDigit(prev))) hump = true;
        else if (isLower(c) && isUpper(prev) && i - 1 > start && isUpper(text.charCodeAt(i - 2))) hump = true;
        // LETTER_DIGIT: a letter beside a digit.
        if (letter !== isLetter(prev)) letterDigit = true;
      }
      if (isUpper(c)) upper = true;
    }
    const word = text.slice(start, i);
    if (hump) pushWord(out, word);
    else {
      const token = upper ? word.toLowerCase() : word;
      if (letterDigit) pushLetterRuns(out, token);
      out.push(token);
    }
  }
  return out;
}

/** The runs of two or more letters of a lowercase ASCII token (LETTER_RUNS' matches), in order. */
function pushLetterRuns(out: string[], token: string): void {
  let run = -1;
  for (let i = 0; i <= token.length; i++) {
    if (i < token.length && isLower(token.charCodeAt(i))) {
      if (run < 0) run = i;
    } else {
      if (run >= 0 && i - run >= 2) out.push(token.slice(run, i));
      run = -1;
    }
  }
}

/**
 * A token, and when it mixes letters and digits (`oauth2`, `ipv6`, `ec2`, `utf8`) also its runs
 * of two or more letters (`oauth`, `ipv`, `ec`, `utf`): a compound technical token is found
 * whole and by its name. `k8s` and `s3` have no such run and stay whole only.
 */
function pushWithLetterRuns(out: string[], token: string): void {
  if (LETTER_DIGIT.test(token)) {
    for (const run of token.match(LETTER_RUNS) ?? []) out.push(run);
  }
  out.push(token);
}

export function isStopWord(token: string): boolean {
  return STOP_WORDS.has(token);
}

const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 50_000;

/**
 * Porter stems longer than this are cut to it ("truncation stemming"), so long derivations
 * Porter leaves apart still meet: financial/finance, documentation/document. Shorter stems
 * are left whole (`located` → `locat` never meets `local`). Measured with the semantic
 * ranker on MetaTool and SGD: 6 ≥ 7 ≥ no cut on every set (R@5 0.695 / 0.691 / 0.690 on
 * all of MetaTool, equal on SGD); the over-matching the issue saw ("located" finding
 * "local") came from the old recall fallback's 4-character stems, which are gone.
 */
export const STEM_PREFIX_LENGTH = 6;

/** Porter stem of one lowercased token, cut to 6 characters; numbers and very short tokens are kept as they are. */
export function stem(token: string): string {
  if (token.length <= 2 || ALL_DIGITS.test(token)) return token;
  let out = stemCache.get(token);
  if (out === undefined) {
    out = stemmer(token).slice(0, STEM_PREFIX_LENGTH);
    if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
    stemCache.set(token, out);
  }
  return out;
}

/**
 * Index terms of a text: tokens without stop words, stemmed. When every token is a stop
 * word (a capability called "now", a query "what can you do"), the stop words are kept so
 * the text still means something.
 */
export function analyze(text: string): string[] {
  return contentTokens(tokenize(text)).map(stem);
}

function contentTokens(tokens: string[]): string[] {
  const kept = tokens.filter((t) => !STOP_WORDS.has(t));
  return kept.length > 0 ? kept : tokens;
}

/**
 * Marks the exact (unstemmed) form of a word as an index term of its own: `=policies` beside
 * `polici`. No analysed term starts with it (terms are letters and digits).
 */
export const EXACT_MARK = "=";

/**
 * What a ranked index stores for a text: each word's stem (so "files" meets "file") and its
 * exact form (so "policies" meets `list_escalation_policies` better than `get_escalation_policy`:
 * in `<operation>_<resource>` tool names the number of the noun is the difference between
 * listing and getting one).
 */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const token of contentTokens(tokenize(text))) out.push(stem(token), EXACT_MARK + token);
  return out;
}

/** An English plural by its shape: `teams`, `policies`, `entries` (not `class`, `status`, `analysis`). */
function isPlural(word: string): boolean {
  return word.length > 3 && word.endsWith("s") && !/(?:ss|us|is)$/.test(word) && stem(word) !== word;
}

/** One analysed query word: its index term (a stem) and, for a word of the query itself, its exact form. */
export interface QueryTerm {
  term: string;
  /** `EXACT_MARK` + the word as written (lowercased); absent for terms the query implies (affixes, names by shape). */
  exact?: string;
}

/**
 * A query's terms against an index: like `analyze`, but a camelCase word (`MySQL`) the index
 * knows whole (`mysql`) is taken whole only, without its parts (`my`, `sql`), so it is not
 * outranked by whatever matches a part. A word the index does not know whole keeps its parts.
 */
export function analyzeQuery(text: string, known: (term: string) => boolean): string[] {
  return analyzeQueryTerms(text, known).map((t) => t.term);
}

/** `analyzeQuery` with each word's exact form (see `indexTerms`). */
export function analyzeQueryTerms(text: string, known: (term: string) => boolean): QueryTerm[] {
  const tokens: string[] = [];
  for (const word of text.split(NON_WORD)) {
    if (word === "") continue;
    const lower = word.toLowerCase();
    if (known(stem(lower))) tokens.push(lower);
    else if (HUMP.test(word)) {
      for (const piece of splitHumps(word).split(" ")) if (piece !== "") tokens.push(piece.toLowerCase());
    } else if (LETTER_DIGIT.test(lower)) tokens.push(...(lower.match(LETTER_RUNS) ?? [lower]));
    else tokens.push(lower);
  }
  const kept = contentTokens(tokens);
  // Only a plural carries its exact form: it says "many" (`all teams` → `list_teams`), where a
  // base form says nothing about number (`find a restaurant` → `find_restaurants`).
  const out: QueryTerm[] = kept.map((t) =>
    isPlural(t) ? { term: stem(t), exact: EXACT_MARK + t } : { term: stem(t) },
  );
  // A run-together word the index does not know (`webhook`, `heatwave`) also asks for the
  // index words it begins or ends with (`web`, `wave`).
  const extra: QueryTerm[] = [];
  for (const term of entityTerms(text)) if (known(term)) extra.push({ term });
  for (const [i, { term }] of out.entries()) {
    if (!known(term)) for (const affix of knownAffixes(kept[i]!, known)) extra.push({ term: affix });
  }
  return extra.length > 0 ? [...out, ...extra] : out;
}

const URL_WORD = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
/**
 * `settings.json`, `src/index.ts`, `~/.bashrc`, `./run.sh`: a name part of 2+ characters and an
 * extension of 1–4 letters and digits starting with a letter. Longer "extensions" are mostly
 * not files: a database namespace (`mflix.movies`, `mydb.mycoll`), a Java package, a host.
 */
const FILE_WORD =
  /^(?:[\p{L}\p{N}_~.-]*\/)*\.?[\p{L}\p{N}_-]{2,}(?:\.[\p{L}\p{N}_-]+)*\.[a-z][a-z0-9]{0,3}$/iu;
/** `/etc/hosts`, `~/.bashrc`, `./out`, `src/lib/`: rooted at `/`, `~/`, `./` or `../`, or ending in `/` (not `and/or`). */
const PATH_WORD = /^(?:(?:~|\.{1,2})?\/[\p{L}\p{N}_.~/-]+|[\p{L}\p{N}_.-]+(?:\/[\p{L}\p{N}_.-]+)*\/)$/u;

/**
 * What a query names by its shape rather than its words: a URL (`https://…`) asks for
 * `url`; a file name or path (`settings.json`, `src/lib/`) for `file` and `path`, the words
 * tools use for what they take (their argument names and descriptions are indexed). Words
 * are the query's whitespace words with outer punctuation trimmed.
 */
export function entityTerms(text: string): string[] {
  const out = new Set<string>();
  for (const raw of text.split(/\s+/)) {
    const word = raw.replace(/^[("'`<[]+|[)"'`>\],;:!?.]+$/gu, "");
    if (word === "") continue;
    if (URL_WORD.test(word)) out.add("url");
    else if (FILE_WORD.test(word) || PATH_WORD.test(word)) {
      out.add("file");
      out.add("path");
    }
  }
  return [...out];
}

/** Run-together words are split only when this long, into pieces at least this long. */
const AFFIX_MIN_WORD = 6;
const AFFIX_MIN_PIECE = 3;

/**
 * The longest known prefix and the longest known suffix (each at least 3 letters, leaving at
 * least 3, not a stop word) of a word the index does not know, as index terms: `webhook` →
 * `web` when `web` is indexed. Letters only: `utf8mb4` or `sha256sum` are not split.
 */
export function knownAffixes(word: string, known: (term: string) => boolean): string[] {
  if (word.length < AFFIX_MIN_WORD || !ALL_LETTERS.test(word)) return [];
  const out: string[] = [];
  for (let cut = word.length - AFFIX_MIN_PIECE; cut >= AFFIX_MIN_PIECE; cut--) {
    const piece = word.slice(0, cut);
    if (!STOP_WORDS.has(piece) && known(stem(piece))) {
      out.push(stem(piece));
      break;
    }
  }
  for (let cut = AFFIX_MIN_PIECE; cut <= word.length - AFFIX_MIN_PIECE; cut++) {
    const piece = word.slice(cut);
    if (!STOP_WORDS.has(piece) && known(stem(piece))) {
      if (!out.includes(stem(piece))) out.push(stem(piece));
      break;
    }
  }
  return out;
}
