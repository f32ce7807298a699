import { describe, expect, it } from "vitest";
import { analyze, isStopWord, stem, tokenize } from "./analyze.js";

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
    expect(tokenize("Café mp3 ÜberTool")).toEqual(["café", "mp3", "über", "tool", "übertool"]);
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
