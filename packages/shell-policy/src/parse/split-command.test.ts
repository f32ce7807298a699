import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { splitCommandLine } from "./split-command.js";

// Lines a shell passes through unchanged apart from quote removal: the split must equal bash's.
const ACCEPTED: [string, string[]][] = [
  ["node server.js", ["node", "server.js"]],
  [
    "npx -y @modelcontextprotocol/server-everything",
    ["npx", "-y", "@modelcontextprotocol/server-everything"],
  ],
  ["  python3   -m   srv  ", ["python3", "-m", "srv"]],
  [`node "my server.js" 'a b' c\\ d`, ["node", "my server.js", "a b", "c d"]],
  [`node x"y"'z' --flag=1 key=value`, ["node", "xyz", "--flag=1", "key=value"]],
  [`node '{"a":1,"b":[2]}'`, ["node", `{"a":1,"b":[2]}`]],
  [`node "quote \\" and \\\\ and \\$HOME"`, ["node", `quote " and \\ and $HOME`]],
  [`node 'single $HOME \`x\` *.js ~ {a,b}'`, ["node", "single $HOME `x` *.js ~ {a,b}"]],
  [`node "" ''`, ["node", "", ""]],
  ["/usr/bin/env node srv.mjs 8080", ["/usr/bin/env", "node", "srv.mjs", "8080"]],
  [
    "uvx mcp-server-fetch@1.2 --user-agent=capgate!",
    ["uvx", "mcp-server-fetch@1.2", "--user-agent=capgate!"],
  ],
  [`"/opt/My Server/bin/srv" --stdio`, ["/opt/My Server/bin/srv", "--stdio"]],
  ["node a\\*b", ["node", "a*b"]],
];

// Everything a shell would do more than split words: refused, with the reason.
const REFUSED: [string, RegExp][] = [
  ["node a.js && node b.js", /command list/],
  ["node a.js; node b.js", /operator .;.|one command/],
  ["node a.js | tee log", /pipe/],
  ["node a.js > out.txt", /redirection/],
  ["node a.js < in.txt", /redirection/],
  ["node a.js &", /operator '&'/],
  ["node a.js;", /operator ';'/],
  ["node a.js & node b.js", /operator '&'|one command/],
  ["(node a.js)", /subshell/],
  ["{ node a.js; }", /group/],
  ["! node a.js", /negation/],
  ["TOKEN=abc node a.js", /environment variable/],
  ["node $HOME/a.js", /expanded by a shell/],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal shell parameter expansion.
  ["node ${DIR}/a.js", /expanded by a shell/],
  ["node $(pwd)/a.js", /expanded by a shell/],
  ["node `pwd`/a.js", /expanded by a shell/],
  [`node "$HOME/a.js"`, /shell would expand/],
  [`node "\`pwd\`"`, /shell would expand/],
  ["node *.js", /unquoted '\*'/],
  ["node a?.js", /unquoted '\?'/],
  ["node [ab].js", /unquoted/],
  ["node {a,b}.js", /unquoted '\{'/],
  ["node ~/srv.js", /unquoted '~'/],
  ["node --prefix=~/x", /unquoted '~'/],
  ["node a.js # comment", /comment/],
  ["node $'a\\nb'", /expanded by a shell/],
  ["node a.js\nnode b.js", /line break/],
  ["node 'unterminated", /not valid shell syntax/],
  ["   ", /empty/],
  ["if true; then node a.js; fi", /if statement/],
];

/** bash's own words for a line that has no expansions (a test oracle only: the code never runs a shell). */
function bashWords(line: string): string[] {
  const out = execFileSync("bash", ["--norc", "--noprofile", "-c", `printf '%s\\0' ${line}`], {
    encoding: "utf8",
  });
  return out.split("\0").slice(0, -1);
}

describe("splitCommandLine", () => {
  it.each(ACCEPTED)("splits %s like bash", async (line, expected) => {
    const split = await splitCommandLine(line);
    expect(split).toEqual({ ok: true, argv: expected });
    expect(bashWords(line)).toEqual(expected);
  });

  it.each(REFUSED)("refuses %j", async (line, reason) => {
    const split = await splitCommandLine(line);
    expect(split.ok).toBe(false);
    if (!split.ok) expect(split.reason).toMatch(reason);
  });
});
