/**
 * A strict JSON reader for model output. JSON.parse cannot report duplicate keys,
 * refuses nothing on depth and builds objects before we can veto `__proto__`; this
 * reader does all three in one iterative pass, so hostile input can neither blow the
 * stack nor touch a prototype, and every error says where it happened.
 */

export type StrictJsonErrorCode = "invalid_json" | "duplicate_key" | "forbidden_key" | "too_deep";

export class StrictJsonError extends Error {
  constructor(
    readonly code: StrictJsonErrorCode,
    message: string,
    readonly offset: number,
    /** Dotted path of the value being read when the error happened, e.g. `arguments.path`. */
    readonly path: string,
  ) {
    super(message);
  }
}

export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

interface Frame {
  kind: "object" | "array";
  value: Record<string, unknown> | unknown[];
  keys?: Set<string>;
  pendingKey?: string;
  path: string;
}

export interface ReadResult {
  value: unknown;
  /** Offset just after the value. */
  end: number;
}

const WS = new Set([" ", "\t", "\n", "\r"]);

function child(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

/** Read one JSON value starting at `start` (after optional whitespace). */
export function readJsonValue(text: string, start: number, maxDepth: number): ReadResult {
  let i = start;
  const stack: Frame[] = [];
  let root: unknown;
  let haveRoot = false;

  const fail = (code: StrictJsonErrorCode, message: string, at = i): never => {
    const top = stack[stack.length - 1];
    const path = top ? (top.pendingKey !== undefined ? child(top.path, top.pendingKey) : top.path) : "";
    throw new StrictJsonError(code, message, at, path);
  };
  const skipWs = (): void => {
    while (i < text.length && WS.has(text[i] as string)) i++;
  };
  const describe = (at: number): string =>
    at >= text.length ? "end of input" : `'${text[at] === "\n" ? "\\n" : text[at]}'`;

  const readString = (): string => {
    // text[i] === '"'
    i++;
    let out = "";
    let runStart = i;
    while (true) {
      if (i >= text.length) fail("invalid_json", "unterminated string");
      const ch = text.charCodeAt(i);
      if (ch === 0x22) {
        out += text.slice(runStart, i);
        i++;
        return out;
      }
      if (ch === 0x5c) {
        out += text.slice(runStart, i);
        const esc = text[i + 1];
        switch (esc) {
          case '"':
            out += '"';
            break;
          case "\\":
            out += "\\";
            break;
          case "/":
            out += "/";
            break;
          case "b":
            out += "\b";
            break;
          case "f":
            out += "\f";
            break;
          case "n":
            out += "\n";
            break;
          case "r":
            out += "\r";
            break;
          case "t":
            out += "\t";
            break;
          case "u": {
            const hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("invalid_json", "bad \\u escape in string", i);
            out += String.fromCharCode(Number.parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            fail("invalid_json", `bad escape '\\${esc ?? ""}' in string`, i);
        }
        i += 2;
        runStart = i;
        continue;
      }
      if (ch < 0x20) fail("invalid_json", "raw control character in string (escape it, e.g. \\n)");
      i++;
    }
  };

  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

  const readScalar = (): unknown => {
    const ch = text[i];
    if (ch === '"') return readString();
    if (ch === "t" && text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (ch === "f" && text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (ch === "n" && text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) fail("invalid_json", "malformed number");
      i += (m as RegExpExecArray)[0].length;
      return Number((m as RegExpExecArray)[0]);
    }
    return fail("invalid_json", `unexpected ${describe(i)}, expected a JSON value`);
  };

  // Attach a finished value to the container on top of the stack (or make it the root).
  const attach = (value: unknown): void => {
    const top = stack[stack.length - 1];
    if (!top) {
      root = value;
      haveRoot = true;
      return;
    }
    if (top.kind === "array") (top.value as unknown[]).push(value);
    else {
      (top.value as Record<string, unknown>)[top.pendingKey as string] = value;
      top.pendingKey = undefined;
    }
  };

  const open = (kind: "object" | "array"): void => {
    if (stack.length + 1 > maxDepth) fail("too_deep", `nesting deeper than ${maxDepth} levels`);
    const top = stack[stack.length - 1];
    const path = top
      ? top.kind === "array"
        ? child(top.path, (top.value as unknown[]).length)
        : child(top.path, top.pendingKey as string)
      : "";
    stack.push(kind === "object" ? { kind, value: {}, keys: new Set(), path } : { kind, value: [], path });
    i++;
  };

  // State machine: expect a value, then a separator or a closer.
  skipWs();
  let expectValue = true;
  while (true) {
    if (expectValue) {
      skipWs();
      const ch = text[i];
      if (ch === "{") {
        open("object");
        skipWs();
        if (text[i] === "}") {
          i++;
          const done = stack.pop() as Frame;
          attach(done.value);
          expectValue = false;
        } else {
          readKey();
        }
        continue;
      }
      if (ch === "[") {
        open("array");
        skipWs();
        if (text[i] === "]") {
          i++;
          const done = stack.pop() as Frame;
          attach(done.value);
          expectValue = false;
          continue;
        }
        continue;
      }
      attach(readScalar());
      expectValue = false;
    }
    if (stack.length === 0 && haveRoot) return { value: root, end: i };
    skipWs();
    const top = stack[stack.length - 1] as Frame;
    const ch = text[i];
    if (ch === ",") {
      i++;
      if (top.kind === "object") {
        skipWs();
        readKey();
      }
      expectValue = true;
      continue;
    }
    if ((ch === "}" && top.kind === "object") || (ch === "]" && top.kind === "array")) {
      i++;
      stack.pop();
      attach(top.value);
      continue;
    }
    fail(
      "invalid_json",
      top.kind === "object"
        ? `unexpected ${describe(i)}, expected ',' or '}' after a property value`
        : `unexpected ${describe(i)}, expected ',' or ']' after an array element`,
    );
  }

  function readKey(): void {
    const top = stack[stack.length - 1] as Frame;
    if (text[i] !== '"')
      fail("invalid_json", `unexpected ${describe(i)}, expected a property name in double quotes`);
    const keyAt = i;
    const key = readString();
    if (FORBIDDEN_KEYS.has(key)) {
      throw new StrictJsonError(
        "forbidden_key",
        `the key \`${key}\` is not allowed`,
        keyAt,
        child(top.path, key),
      );
    }
    if (top.keys?.has(key)) {
      throw new StrictJsonError(
        "duplicate_key",
        `the key \`${key}\` appears twice`,
        keyAt,
        child(top.path, key),
      );
    }
    top.keys?.add(key);
    top.pendingKey = key;
    skipWs();
    if (text[i] !== ":") fail("invalid_json", `unexpected ${describe(i)}, expected ':' after property name`);
    i++;
    expectValue = true;
  }
}

/** 1-based line and column of an offset, for messages. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastBreak = -1;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text.charCodeAt(k) === 10) {
      line++;
      lastBreak = k;
    }
  }
  return { line, column: offset - lastBreak };
}

export type StrictJsonResult =
  | { ok: true; value: unknown }
  | {
      ok: false;
      code: StrictJsonErrorCode | "trailing_text";
      message: string;
      line: number;
      column: number;
      path: string;
    };

/**
 * Parse a whole JSON document strictly (duplicate keys, prototype keys and excess depth
 * are errors), reporting the line and column of the problem — for config files and
 * other JSON a person wrote.
 */
export function parseJsonStrict(text: string, options: { maxDepth?: number } = {}): StrictJsonResult {
  const maxDepth = options.maxDepth ?? 256;
  try {
    const { value, end } = readJsonValue(text, 0, maxDepth);
    let rest = end;
    while (rest < text.length && WS.has(text[rest] as string)) rest++;
    if (rest < text.length) {
      const { line, column } = lineColumn(text, rest);
      return {
        ok: false,
        code: "trailing_text",
        message: "unexpected text after the JSON value",
        line,
        column,
        path: "",
      };
    }
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    const { line, column } = lineColumn(text, error.offset);
    return { ok: false, code: error.code, message: error.message, line, column, path: error.path };
  }
}
