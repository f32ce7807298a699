import { describe, expect, it } from "vitest";
import { parseMcpServersConfig } from "./config.js";
import type { ConfigProblem } from "./errors.js";
import {
  parseToolApprovals,
  parseToolFilter,
  toolApprovalOverride,
  toolExclusion,
  toolGlobMatches,
  toolGlobProblem,
} from "./tool-filter.js";

const names = (name: string, callable = name) => ({ name, callable });

describe("toolGlobMatches", () => {
  // Each pattern with names it must match and names it must not.
  const cases: Array<[string, string[], string[]]> = [
    [
      "browser_*",
      ["browser_", "browser_click", "browser_a/b.c"],
      ["Browser_click", "xbrowser_click", "browser"],
    ],
    [
      "*_delete_*",
      ["repo_delete_all", "_delete_", "a_delete_b_delete_c"],
      ["delete_repo", "repo_delete", "repo-delete-x"],
    ],
    ["get-?um", ["get-sum", "get-Xum"], ["get-um", "get-suum", "get-sum2"]],
    ["echo", ["echo"], ["echo2", "Echo", "xecho", "ech"]],
    ["*", ["", "anything at all", "a/b", ".hidden"], []],
    ["a*b*c", ["abc", "aXbYc", "abbbc", "acbc"], ["ab", "acb", "abcx"]],
    // Characters regular expressions give meaning to are themselves here.
    ["a.c", ["a.c"], ["abc", "a-c"]],
    ["x+(y)|z$", ["x+(y)|z$"], ["xxy", "z", "x+(y)"]],
    ["^*", ["^", "^abc"], ["abc"]],
    // `?` is one character, an astral one too.
    ["?", ["a", "😀"], ["", "ab"]],
  ];
  for (const [pattern, yes, no] of cases) {
    it(`${JSON.stringify(pattern)} matches exactly what it should`, () => {
      for (const name of yes) expect(toolGlobMatches(pattern, name), name).toBe(true);
      for (const name of no) expect(toolGlobMatches(pattern, name), name).toBe(false);
    });
  }

  it("stays linear-ish on a pathological pattern and a long hostile name", () => {
    const pattern = `${"*a".repeat(60)}b`;
    expect(toolGlobMatches(pattern, "a".repeat(10_000))).toBe(false);
    expect(toolGlobMatches(pattern, `${"a".repeat(10_000)}b`)).toBe(true);
  });
});

describe("toolGlobProblem", () => {
  it("accepts * and ? globs and refuses what other dialects would read differently", () => {
    expect(toolGlobProblem("browser_*")).toBeUndefined();
    expect(toolGlobProblem("get-?um")).toBeUndefined();
    expect(toolGlobProblem("")).toMatch(/empty/);
    expect(toolGlobProblem("x".repeat(257))).toMatch(/at most 256/);
    expect(toolGlobProblem("a\u0000b")).toMatch(/control/);
    expect(toolGlobProblem("a\u202eb")).toMatch(/control/);
    for (const bad of ["{a,b}", "[abc]", "a\\*", "!echo"])
      expect(toolGlobProblem(bad), bad).toMatch(/separate entries/);
    expect(toolGlobProblem(3)).toMatch(/string/);
  });
});

describe("toolExclusion", () => {
  it("deny wins over allow; no allow list admits everything not denied", () => {
    const rules = { tools: { allow: ["browser_*"], deny: ["*_close"] } };
    expect(toolExclusion(rules, names("browser_click"))).toBeUndefined();
    expect(toolExclusion(rules, names("browser_close"))).toBe('tools.deny matches it ("*_close")');
    expect(toolExclusion(rules, names("fs_read"))).toBe("no tools.allow pattern matches it");
    expect(toolExclusion({ tools: { deny: ["rm*"] } }, names("ls"))).toBeUndefined();
    expect(toolExclusion({ tools: { allow: [] } }, names("ls"))).toBe("no tools.allow pattern matches it");
    expect(toolExclusion({}, names("anything"))).toBeUndefined();
  });

  it("deny catches the callable name too (whitespace in a server's name becomes _)", () => {
    const rules = { tools: { deny: ["delete_*"] } };
    expect(toolExclusion(rules, names("delete file", "delete_file"))).toMatch(/tools\.deny/);
  });
});

describe("toolApprovalOverride", () => {
  it("the most specific glob wins; on a tie ask; none matching leaves the global mode", () => {
    const rules = {
      approval: { "*": "ask", "read_*": "never", read_secrets: "ask", "*_x": "never", "x_*": "ask" },
    } as const;
    expect(toolApprovalOverride(rules, names("write_file"))).toBe("ask");
    expect(toolApprovalOverride(rules, names("read_file"))).toBe("never");
    expect(toolApprovalOverride(rules, names("read_secrets"))).toBe("ask");
    // "*_x" and "x_*" pin down two characters each: ask.
    expect(toolApprovalOverride(rules, names("x_x"))).toBe("ask");
    expect(toolApprovalOverride({ approval: { "get-*": "never" } }, names("echo"))).toBeUndefined();
    expect(toolApprovalOverride({}, names("echo"))).toBeUndefined();
  });

  it("does not depend on the order of the keys", () => {
    const a = { approval: { "*_x": "never", "x_*": "ask" } } as const;
    const b = { approval: { "x_*": "ask", "*_x": "never" } } as const;
    expect(toolApprovalOverride(a, names("x_x"))).toBe(toolApprovalOverride(b, names("x_x")));
  });
});

describe("config: tools and approval in a server entry", () => {
  it("parses both and keeps them in the checked copy", () => {
    const servers = parseMcpServersConfig({
      pw: {
        command: "npx",
        tools: { allow: ["browser_*"], deny: ["*_close"] },
        approval: { browser_navigate: "ask", browser_snapshot: "never" },
      },
      remote: { url: "https://mcp.example.com/mcp", tools: { deny: ["*delete*"] } },
    });
    expect(servers.pw).toMatchObject({
      tools: { allow: ["browser_*"], deny: ["*_close"] },
      approval: { browser_navigate: "ask", browser_snapshot: "never" },
    });
    expect(servers.remote?.tools).toEqual({ deny: ["*delete*"] });
  });

  it("names the bad property for each malformed filter or override", () => {
    const problems = (entry: Record<string, unknown>) => {
      try {
        parseMcpServersConfig({ s: { command: "x", ...entry } });
        return [];
      } catch (error) {
        return (error as { problems: ConfigProblem[] }).problems;
      }
    };
    expect(problems({ tools: ["echo"] })[0]).toMatchObject({ property: "mcpServers.s.tools" });
    expect(problems({ tools: { allow: "echo" } })[0]).toMatchObject({
      property: "mcpServers.s.tools.allow",
    });
    expect(problems({ tools: { alow: ["echo"] } })[0]).toMatchObject({
      property: "mcpServers.s.tools.alow",
    });
    const brace = problems({ tools: { deny: ["ok_*", "{a,b}"] } })[0];
    expect(brace).toMatchObject({ property: "mcpServers.s.tools.deny[1]" });
    expect(brace?.message).toMatch(/\* \(any characters\) and \? \(one character\)/);
    expect(problems({ approval: { echo: "always" } })[0]).toMatchObject({
      property: 'mcpServers.s.approval["echo"]',
      message: expect.stringMatching(/"ask".*"never".*got "always"/),
    });
    expect(problems({ approval: { "": "ask" } })[0]?.message).toMatch(/empty/);
    expect(problems({ approval: ["echo"] })[0]).toMatchObject({ property: "mcpServers.s.approval" });
  });

  it("keeps a glob spelled __proto__ a key, not a prototype", () => {
    const found: ConfigProblem[] = [];
    const parsed = parseToolApprovals(JSON.parse('{"__proto__":"ask"}'), "a", found);
    expect(found).toEqual([]);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed ?? {})).toEqual(["__proto__"]);
    expect(parseToolFilter({ allow: ["x"] }, "t", found)).toEqual({ allow: ["x"] });
  });
});
