// node bench/scripts/mcp-evals/extract-mongodb.mjs <packages/accuracy-tests/src of a mongodb-mcp-server checkout>
// MongoDB MCP server accuracy tests → [{ query, tools }]: each object literal with `prompt` and
// `expectedToolCalls`; tools are the expected calls not marked `optional: true` (spread helper
// calls are the optional list calls). Prompts built from same-file string constants are resolved.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const dir = process.argv[2];
const out = [];
let unresolved = 0;
for (const file of readdirSync(dir).sort()) {
  const sf = ts.createSourceFile(file, readFileSync(join(dir, file), "utf8"), ts.ScriptTarget.Latest, true);
  const consts = new Map();
  const visitConst = (n) => {
    if (
      ts.isVariableDeclaration(n) &&
      ts.isIdentifier(n.name) &&
      n.initializer &&
      (ts.isStringLiteral(n.initializer) || ts.isNoSubstitutionTemplateLiteral(n.initializer))
    )
      consts.set(n.name.text, n.initializer.text);
    ts.forEachChild(n, visitConst);
  };
  visitConst(sf);
  const str = (e) => {
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
    if (ts.isTemplateExpression(e)) {
      let s = e.head.text;
      for (const span of e.templateSpans) {
        if (!ts.isIdentifier(span.expression) || !consts.has(span.expression.text)) return undefined;
        s += consts.get(span.expression.text) + span.literal.text;
      }
      return s;
    }
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const a = str(e.left),
        b = str(e.right);
      return a !== undefined && b !== undefined ? a + b : undefined;
    }
    if (ts.isIdentifier(e) && consts.has(e.text)) return consts.get(e.text);
    return undefined;
  };
  const visit = (n) => {
    if (ts.isObjectLiteralExpression(n)) {
      const props = new Map(
        n.properties.filter(ts.isPropertyAssignment).map((p) => [p.name.getText(sf), p.initializer]),
      );
      if (props.has("prompt") && props.has("expectedToolCalls")) {
        const prompt = str(props.get("prompt"));
        const calls = props.get("expectedToolCalls");
        const tools = [];
        if (ts.isArrayLiteralExpression(calls)) {
          for (const el of calls.elements) {
            if (!ts.isObjectLiteralExpression(el)) continue;
            const p = new Map(
              el.properties.filter(ts.isPropertyAssignment).map((x) => [x.name.getText(sf), x.initializer]),
            );
            if (p.get("optional")?.kind === ts.SyntaxKind.TrueKeyword) continue;
            const name = p.get("toolName") && str(p.get("toolName"));
            if (name) tools.push(name);
          }
        }
        if (prompt === undefined) unresolved++;
        else if (tools.length > 0) out.push({ query: prompt, tools: [...new Set(tools)], file });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
console.error(`unresolved prompts: ${unresolved}`);
console.log(JSON.stringify(out, null, 1));
