import { describe, expect, it } from "vitest";
import { analyze, stem, tokenize } from "./analyze.js";

describe("tokenize", () => {
  it("splits identifiers on . _ - / : and camelCase", () => {
    expect(tokenize("fs.read")).toEqual(["fs", "read"]);
    expect(tokenize("read_file-now")).toEqual(["read", "file", "now"]);
    expect(tokenize("github/create_issue")).toEqual(["github", "create", "issue"]);
    expect(tokenize("mcp:server")).toEqual(["mcp", "server"]);
    expect(tokenize("readFile")).toEqual(["read", "file"]);
    expect(tokenize("HTTPServer")).toEqual(["http", "server"]);
    expect(tokenize("ResearchHelper")).toEqual(["research", "helper"]);
  });

  it("keeps letters of any script and digits", () => {
    expect(tokenize("Café mp3 ÜberTool")).toEqual(["café", "mp3", "über", "tool"]);
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
