import { describe, expect, it } from "vitest";
import {
  analyze,
  analyzeQuery,
  analyzeQueryTerms,
  entityTerms,
  indexTerms,
  isStopWord,
  knownAffixes,
  stem,
  tokenize,
} from "./analyze.js";

describe("tokenize", () => {
  it("splits identifiers on . _ - / : and camelCase", () => {
    expect(tokenize("fs.read")).toEqual(["fs", "read"]);
    expect(tokenize("read_file-now")).toEqual(["read", "file", "now"]);
    expect(tokenize("github/create_issue")).toEqual(["github", "create", "issue"]);
    expect(tokenize("mcp:server")).toEqual(["mcp", "server"]);
    // A word camelCase splits is also kept whole (see the MySQL test below).
    expect(tokenize("readFile")).toEqual(["read", "file", "readfile"]);
    expect(tokenize("HTTPServer")).toEqual(["http", "server", "httpserver"]);
    expect(tokenize("ResearchHelper")).toEqual(["research", "helper", "researchhelper"]);
  });

  it("keeps letters of any script and digits", () => {
    expect(tokenize("Café mp3 ÜberTool")).toEqual(["café", "mp", "mp3", "über", "tool", "übertool"]);
  });

  it("tokenizes ASCII text (its own scan) as the Unicode rules do", () => {
    // A non-ASCII word sends the whole text through the regular expressions.
    const texts = [
      "fs.read readFile HTTPServer XMLHttpRequest2x ABCd aBCDe a1B 1aB AB1c",
      "OAuth2 login over IPv6 on ec2, k8s and s3 -- utf8mb4 sha256sum 3d 42",
      "  list_escalation_policies(path: string)\n  getTeam/ID_9 __init__ x ",
      "",
      "!!",
    ];
    for (const text of texts) expect([...tokenize(text), "é"]).toEqual(tokenize(`${text} é`));
  });
});

describe("analyze", () => {
  it("stems so that word forms meet", () => {
    expect(stem("files")).toBe(stem("file"));
    expect(stem("reading")).toBe(stem("read"));
    expect(stem("financial")).toBe(stem("finance"));
    expect(stem("documentation")).toBe(stem("document"));
  });

  it("drops stop words and contraction remnants", () => {
    expect(analyze("I'm looking for the files")).toEqual(["look", "file"]);
  });

  it("keeps stop words when nothing else is left", () => {
    expect(analyze("now")).toEqual(["now"]);
    expect(analyze("what can you do")).toEqual(["what", "can", "you", "do"]);
  });

  it("returns nothing for punctuation only", () => {
    expect(analyze(" ... !!")).toEqual([]);
  });
});

describe("analysis defects (issue 11)", () => {
  it("keeps list, make, get, find, open, run and id: they are what tools do", () => {
    expect(analyze("list databases")).toEqual(["list", "databa"]);
    expect(analyze("make a folder")).toEqual(["make", "folder"]);
    for (const w of ["list", "make", "get", "find", "open", "run", "id", "set", "show"]) {
      expect(isStopWord(w)).toBe(false);
    }
  });

  it("indexes MySQL-style words whole as well as split, so they meet identifiers", () => {
    // `azure_mysql_list` indexes `mysql`; the query "MySQL" must produce it too.
    expect(analyze("azure_mysql_list")).toContain("mysql");
    expect(analyze("MySQL")).toContain("mysql");
    expect(analyze("PostgreSQL")).toContain(stem("postgresql"));
    expect(analyze("GitHub")).toContain("github");
    expect(analyze("github/create_issue")).toContain("github");
    expect(analyze("macOS")).toContain("maco");
    expect(analyze("macos")).toContain("maco");
    expect(analyze("iPhone")).toContain(stem("iphone"));
  });

  it("does not stem short words into their neighbours", () => {
    expect(stem("located")).not.toBe(stem("local"));
    expect(stem("located")).not.toBe(stem("allocate"));
  });
});

describe("query words the index does not know (round 2)", () => {
  const vocabulary = new Set(["web", "hook", "wave", "file", "path", "url", "sql"].map(stem));
  const known = (t: string) => vocabulary.has(t);

  it("splits a run-together word into the index words it begins and ends with", () => {
    expect(knownAffixes("webhook", known)).toEqual(["web", "hook"]);
    expect(knownAffixes("heatwave", known)).toEqual(["wave"]);
    expect(analyzeQuery("post to a webhook", known)).toEqual(["post", stem("webhook"), "web", "hook"]);
  });

  it("leaves known, short, digit-bearing and unsplittable words alone", () => {
    expect(analyzeQuery("web hook", known)).toEqual(["web", "hook"]);
    expect(knownAffixes("webby", known)).toEqual([]); // under 6 letters
    expect(knownAffixes("web2hook", known)).toEqual([]);
    expect(knownAffixes("kubernetes", known)).toEqual([]);
    // A stop word is never the piece found ("theweb" does not ask for "the").
    expect(knownAffixes("thesql", (t) => t === "the" || t === "sql")).toEqual(["sql"]);
  });

  it("reads file names, paths and URLs as asking for file/path and url", () => {
    expect(entityTerms("edit a value in settings.json")).toEqual(["file", "path"]);
    expect(entityTerms("open (README.md).")).toEqual(["file", "path"]);
    expect(entityTerms("look in src/lib/ and ~/.bashrc")).toEqual(["file", "path"]);
    expect(entityTerms("see https://example.org/a")).toEqual(["url"]);
    // Not files: a database namespace or a dotted name with a long last part.
    for (const q of [
      "e.g. this",
      "pi is 3.14",
      "version 1.2.3",
      "and/or TCP/IP",
      "a plain question",
      "find movies in 'mflix.movies'",
      "count documents in mydb.mycoll",
    ]) {
      expect(entityTerms(q)).toEqual([]);
    }
  });

  it("adds those terms only when the index has them", () => {
    expect(analyzeQuery("open config.yaml", known)).toEqual(["open", "config", "yaml", "file", "path"]);
    expect(analyzeQuery("open config.yaml", () => false)).toEqual(["open", "config", "yaml"]);
  });
});

describe("compound technical tokens and exact forms (issue 22)", () => {
  it("keeps a letters-and-digits token whole and also indexes its letter runs", () => {
    expect(tokenize("OAuth2 login over IPv6 on ec2, k8s and s3")).toEqual([
      "o",
      "auth",
      "auth2",
      "oauth",
      "oauth2",
      "login",
      "over",
      "i",
      "pv",
      "pv6",
      "ipv",
      "ipv6",
      "on",
      "ec",
      "ec2",
      "k8s",
      "and",
      "s3",
    ]);
    expect(tokenize("postgresql mysql")).toEqual(["postgresql", "mysql"]);
  });

  it("asks for a compound query word whole when the index knows it, else for its letter runs", () => {
    const index = new Set(analyze("Configure oauth2 clients; list ipv addresses"));
    const known = (t: string) => index.has(t);
    expect(analyzeQuery("oauth2", known)).toEqual(["oauth2"]);
    expect(analyzeQuery("oauth", known)).toEqual(["oauth"]);
    expect(analyzeQuery("ipv6", known)).toEqual(["ipv"]);
  });

  it("indexes each word's stem and its exact form; a plural query word carries both", () => {
    expect(indexTerms("list_escalation_policies")).toEqual([
      "list",
      "=list",
      "escal",
      "=escalation",
      "polici",
      "=policies",
    ]);
    expect(analyzeQueryTerms("all escalation policies", () => true)).toEqual([
      { term: "escal" },
      { term: "polici", exact: "=policies" },
    ]);
    // A base form says nothing about number; neither do words that merely end in s.
    expect(analyzeQueryTerms("find a restaurant with status class analysis", () => true)).toEqual([
      { term: "find" },
      { term: "restau" },
      { term: "statu" },
      { term: "class" },
      { term: "analys" },
    ]);
  });
});
