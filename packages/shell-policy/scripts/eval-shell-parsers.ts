/**
 * Measures candidate shell parsers against the bypass list (test/shell-bypass-cases.ts) by
 * running the real policy (src/policy/shell-policy.ts) on top of an adapter per parser. The
 * candidates are not dependencies of @capgate/shell-policy; install them aside and pass the folder:
 *
 *   npm i --prefix /tmp/parser-eval mvdan-sh@0.10.1 bash-parser@0.5.0 sh-syntax@0.7.0
 *   npx tsx packages/shell-policy/scripts/eval-shell-parsers.ts /tmp/parser-eval/node_modules
 *
 * Prints a markdown table (docs/security.md keeps the latest one).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { loadBashParser, unescapeUnquoted } from "../src/parse/shell-syntax.js";
import type {
  ParsedScript,
  ShellParser,
  ShellWord,
  SimpleCommand,
  StdinSource,
} from "../src/parse/shell-words.js";
import { policyWithParser } from "../src/policy/shell-policy.js";
import { MUST_ALLOW, MUST_DENY, MUST_DENY_UNPARSEABLE } from "../test/shell-bypass-cases.js";

/** Valid bash that a good parser must accept (a rejection is a false denial). */
const VALID_BASH = [
  "cat > out.txt <<< x",
  "cat 2>/dev/null <<< x",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
  "echo ${a[@]:1:2}",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
  "a=(1 2); echo ${#a[@]}",
  "[[ $x =~ ^a.*$ ]] && echo y",
  "case $x in (a) echo a;; esac",
  "f() ( echo sub )",
  "echo $'a\\nb'",
  "select x in a b; do break; done",
  "time { sleep 0; }",
  "coproc cat",
  "echo {1..3}",
  "let i++",
  "exec 3<&-",
  "echo hi >| f",
  "((i++)); echo $((i<<2))",
  "declare -A m=([k]=v)",
  "read -r -d '' x <<'EOF'\nhi\nEOF",
  "cat <<-EOF\n\tx\n\tEOF",
  "echo $(case x in a) echo;; esac)",
  "cat <(ls) <(ls -a)",
  "diff <(sort a) <(sort b) > out 2>&1",
];

type Obj = Record<string, unknown> & { [k: string]: unknown };
const asObj = (v: unknown): Obj => (v ?? {}) as Obj;

const lit = (value: string): ShellWord => ({ raw: value, value, splits: false, glob: false });

// ---- mvdan-sh (GopherJS build of mvdan/sh v3) ----
// Operator numbers as observed in mvdan-sh 0.10.1 (its JS API exposes them as numbers, mvdan/sh#298).
const MV_PIPE = new Set([12, 13]);
const MV_HERESTRING = 63;
const MV_HEREDOCS = new Set([61, 62]);
const MV_IN = 56;

function mvdanParser(req: NodeRequire): ShellParser {
  const sh = req("mvdan-sh") as { syntax: Obj };
  const syntax = sh.syntax as {
    NewParser(): { Parse(src: string, name: string): unknown };
    Walk(node: unknown, fn: (n: unknown) => boolean): void;
    NodeType(node: unknown): string;
  };
  const parser = syntax.NewParser();
  const type = (n: unknown) => syntax.NodeType(n);

  const wordOf = (w: Obj, quoted = false): ShellWord => {
    const acc: ShellWord = { raw: "", value: "", splits: false, glob: false };
    const add = (v: string) => {
      if (acc.value !== undefined) acc.value += v;
    };
    const dyn = (why: string, splits: boolean) => {
      acc.value = undefined;
      acc.dynamic ??= why;
      if (splits) acc.splits = true;
    };
    const part = (p: Obj, inDq: boolean): void => {
      switch (type(p)) {
        case "Lit":
          if (inDq) add(String(p.Value).replace(/\\([$`"\\\n])/g, "$1"));
          else {
            const r = unescapeUnquoted(String(p.Value));
            add(r.value);
            if (r.glob) acc.glob = true;
          }
          return;
        case "SglQuoted":
          add(p.Dollar ? decodeC(String(p.Value)) : String(p.Value));
          return;
        case "DblQuoted":
          for (const q of p.Parts as Obj[]) part(q, true);
          return;
        case "ParamExp":
          dyn("parameter expansion", !inDq);
          return;
        case "CmdSubst":
          dyn("command substitution", !inDq);
          return;
        case "ArithmExp":
          dyn("arithmetic expansion", !inDq);
          return;
        case "ProcSubst":
          dyn("process substitution", false);
          return;
        default:
          dyn(type(p), !inDq);
      }
    };
    for (const p of w.Parts as Obj[]) part(p, quoted);
    return acc;
  };

  const decodeC = (body: string) =>
    body.replace(/\\x([0-9a-fA-F]{1,2})|\\([0-7]{1,3})|\\(.)/g, (_m, h?: string, o?: string, c?: string) =>
      h
        ? String.fromCharCode(Number.parseInt(h, 16))
        : o
          ? String.fromCharCode(Number.parseInt(o, 8))
          : (c ?? ""),
    );

  return {
    name: "mvdan-sh",
    parse(source: string): ParsedScript {
      let file: unknown;
      try {
        file = parser.Parse(source, "");
      } catch (error) {
        return { ok: false, error: String((error as Error).message ?? error) };
      }
      const commands: SimpleCommand[] = [];
      const piped = new Set<unknown>();
      syntax.Walk(file, (n) => {
        if (!n) return true;
        const node = asObj(n);
        if (type(n) === "BinaryCmd" && MV_PIPE.has(Number(node.Op))) piped.add(node.Y);
        if (type(n) === "Stmt" && type(node.Cmd) === "CallExpr") {
          const call = asObj(node.Cmd);
          const words = ((call.Args as Obj[]) ?? []).map((w) => wordOf(w));
          let stdin: StdinSource = piped.has(n) ? { kind: "pipe" } : { kind: "inherited" };
          for (const r of (node.Redirs as Obj[]) ?? []) {
            const op = Number(r.Op);
            if (op === MV_HERESTRING) {
              const v = wordOf(asObj(r.Word)).value;
              stdin = v === undefined ? { kind: "dynamic" } : { kind: "text", text: `${v}\n` };
            } else if (MV_HEREDOCS.has(op) && r.Hdoc) {
              const v = wordOf(asObj(r.Hdoc), true).value;
              stdin = v === undefined ? { kind: "dynamic" } : { kind: "text", text: v };
            } else if (op === MV_IN) stdin = { kind: "file", path: wordOf(asObj(r.Word)).value };
          }
          commands.push({ words, text: source, stdin });
        }
        return true;
      });
      return { ok: true, commands, unresolvable: [] };
    },
  };
}

// ---- bash-parser (vorpaljs, 2017) ----
function bashParser(req: NodeRequire): ShellParser {
  const parse = req("bash-parser") as (src: string) => unknown;
  const wordOf = (w: Obj): ShellWord => {
    const text = String(w.text ?? "");
    const expansions = (w.expansion as Obj[] | undefined) ?? [];
    if (expansions.length > 0) {
      return { raw: text, value: undefined, dynamic: String(expansions[0]?.type), splits: true, glob: false };
    }
    return { ...lit(text), glob: /[*?[]/.test(text) };
  };
  return {
    name: "bash-parser",
    parse(source: string): ParsedScript {
      let ast: unknown;
      try {
        ast = parse(source);
      } catch (error) {
        return { ok: false, error: String((error as Error).message).split("\n")[0] ?? "error" };
      }
      const commands: SimpleCommand[] = [];
      const visit = (node: unknown, piped: boolean): void => {
        if (Array.isArray(node)) {
          for (const [i, n] of node.entries()) visit(n, piped && i > 0);
          return;
        }
        if (!node || typeof node !== "object") return;
        const o = node as Obj;
        if (o.type === "Pipeline") {
          for (const [i, c] of (o.commands as unknown[]).entries()) visit(c, i > 0);
          return;
        }
        if (o.type === "Command") {
          const words: ShellWord[] = [];
          if (o.name) words.push(wordOf(asObj(o.name)));
          let stdin: StdinSource = piped ? { kind: "pipe" } : { kind: "inherited" };
          for (const s of (o.suffix as Obj[]) ?? []) {
            if (s.type === "Word") words.push(wordOf(s));
            else if (s.type === "Redirect" && asObj(s.op).text === "<")
              stdin = { kind: "file", path: String(asObj(s.file).text) };
          }
          commands.push({ words, text: source, stdin });
        }
        for (const [k, v] of Object.entries(o)) if (k !== "type") visit(v, false);
        for (const e of (o.expansion as Obj[]) ?? []) if (e.commandAST) visit(e.commandAST, false);
      };
      visit(ast, false);
      return { ok: true, commands, unresolvable: [] };
    },
  };
}

// ---- sh-syntax (mvdan/sh in WASM) ----
// Its JSON AST maps a statement's command to positions only (processor/structs.go: Cmd *Node
// {Pos, End}); no command type, no words. The adapter can only say whether it parses.
async function shSyntaxParser(
  req: NodeRequire,
): Promise<ShellParser & { parseAsync(s: string): Promise<boolean> }> {
  const mod = (await import(req.resolve("sh-syntax"))) as { parse(text: string): Promise<unknown> };
  return {
    name: "sh-syntax",
    parse: () => ({ ok: true, commands: [], unresolvable: [] }),
    async parseAsync(source: string) {
      try {
        await mod.parse(source);
        return true;
      } catch {
        return false;
      }
    },
  };
}

function measure(parser: ShellParser) {
  const policy = policyWithParser(parser);
  const denied = MUST_DENY.filter((c) => policy.check(c.command).decision === "deny");
  const recognised = denied.filter((c) => policy.check(c.command).rule !== "parse-error").length;
  const missed = MUST_DENY.filter((c) => policy.check(c.command).decision !== "deny").map((c) => c.command);
  const allowed = MUST_ALLOW.filter((c) => policy.check(c.command).decision === "allow").length;
  const falseDeny = MUST_ALLOW.filter((c) => policy.check(c.command).decision !== "allow").map(
    (c) => c.command,
  );
  const unparseable = MUST_DENY_UNPARSEABLE.filter((c) => !parser.parse(c).ok).length;
  const validRejected = VALID_BASH.filter((c) => !parser.parse(c).ok);
  const all = [...MUST_DENY, ...MUST_ALLOW].map((c) => c.command);
  for (const c of all) parser.parse(c); // warm
  const rounds = 20;
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) for (const c of all) parser.parse(c);
  const usPerParse = ((performance.now() - t0) * 1000) / (rounds * all.length);
  return {
    denied: denied.length,
    recognised,
    missed,
    allowed,
    falseDeny,
    unparseable,
    validRejected,
    usPerParse,
  };
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error("usage: eval-shell-parsers.ts <folder with node_modules of the candidates>");
  const req = createRequire(join(dir, "noop.js"));
  const rows: string[] = [];
  const detail: string[] = [];
  const t0 = performance.now();
  const treeSitter = await loadBashParser();
  const tsInit = performance.now() - t0;
  const t1 = performance.now();
  const mvdan = mvdanParser(req);
  mvdan.parse("true");
  const mvInit = performance.now() - t1;
  const bp = bashParser(req);
  for (const [parser, init] of [
    [treeSitter, tsInit],
    [mvdan, mvInit],
    [bp, 0],
  ] as const) {
    const m = measure(parser);
    rows.push(
      `| ${parser.name} | ${m.denied}/${MUST_DENY.length} (${m.recognised} recognised, ${m.denied - m.recognised} only unparseable) | ${m.allowed}/${MUST_ALLOW.length} | ${m.unparseable}/${MUST_DENY_UNPARSEABLE.length} | ${VALID_BASH.length - m.validRejected.length}/${VALID_BASH.length} | ${m.usPerParse.toFixed(0)} µs | ${init.toFixed(0)} ms |`,
    );
    detail.push(`${parser.name} missed: ${JSON.stringify(m.missed)}`);
    detail.push(`${parser.name} false denials: ${JSON.stringify(m.falseDeny)}`);
    detail.push(`${parser.name} rejected valid bash: ${JSON.stringify(m.validRejected)}`);
  }
  const sh = await shSyntaxParser(req);
  let accepted = 0;
  for (const c of VALID_BASH) if (await sh.parseAsync(c)) accepted++;
  let rejected = 0;
  for (const c of MUST_DENY_UNPARSEABLE) if (!(await sh.parseAsync(c))) rejected++;
  const sample = MUST_ALLOW.map((c) => c.command);
  for (const c of sample.slice(0, 5)) await sh.parseAsync(c);
  const s0 = performance.now();
  for (const c of sample) await sh.parseAsync(c);
  const shUs = ((performance.now() - s0) * 1000) / sample.length;
  rows.push(
    `| sh-syntax | n/a (AST has no command nodes) | n/a | ${rejected}/${MUST_DENY_UNPARSEABLE.length} | ${accepted}/${VALID_BASH.length} | ${shUs.toFixed(0)} µs | — |`,
  );
  console.log(
    "| parser | bypass forms denied | ordinary commands allowed | unparseable rejected | valid bash accepted | parse (warm, mean) | first load |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(r);
  console.log();
  for (const d of detail) console.log(d);
}

await main();
