import { CapgateError } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { DuplicateCapabilityError, InvalidManifestError } from "./errors.js";
import type { SearchRanker } from "./ranker.js";
import { Registry } from "./registry.js";
import { manifest } from "./test-fixtures.js";

// Names and capability descriptions deliberately avoid the words a query uses, so a hit
// can only come from where the test says.
const storage = () =>
  manifest("storage", "Persistent workspace state.", [
    ["get", "Read the contents of a text file in the workspace.", ["path"]],
    ["put", "Write a file, replacing it.", ["path", "content"]],
  ]);
const net = () =>
  manifest(
    "net",
    "Talk to remote services over HTTP.",
    [["fetch", "Download a web page and return its text.", ["url"]]],
    ["Researcher"],
  );
const vcs = () =>
  manifest("vcs", "Version control.", [
    ["commit", "Record staged changes with a message.", ["message"]],
    ["log", "Show recent commits.", []],
  ]);

function registry(...ms: Array<ReturnType<typeof storage>>) {
  const r = new Registry();
  for (const m of ms) r.register(m);
  return r;
}

describe("Registry: registering", () => {
  it("registers, gets, lists sorted and unregisters", () => {
    const r = registry(vcs(), storage(), net());
    expect(r.list().map((m) => m.name)).toEqual(["net", "storage", "vcs"]);
    expect(r.has("vcs")).toBe(true);
    expect(r.get("storage")?.tools.map((t) => t.name)).toEqual(["storage.get", "storage.put"]);
    expect(r.size).toBe(3);
    expect(r.unregister("vcs")).toBe(true);
    expect(r.unregister("vcs")).toBe(false);
    expect(r.has("vcs")).toBe(false);
    expect(r.get("vcs")).toBeUndefined();
  });

  it("refuses a duplicate with duplicate_capability", () => {
    const r = registry(storage());
    const error = (() => {
      try {
        r.register(storage());
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DuplicateCapabilityError);
    expect(CapgateError.isInstance(error) && error.code).toBe("duplicate_capability");
  });

  it("refuses an invalid manifest listing every problem, and adds nothing", () => {
    const r = new Registry();
    const bad = { ...storage(), name: "Storage", version: "1" };
    let error: unknown;
    try {
      r.register(bad);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidManifestError);
    const e = error as InvalidManifestError;
    expect(e.code).toBe("invalid_manifest");
    expect(e.property).toBe("name");
    expect(e.message).toMatch(/2 problems/);
    expect(e.message).toMatch(/- name: /);
    expect(e.message).toMatch(/- version: /);
    expect(e.problems).toHaveLength(2);
    expect(r.size).toBe(0);
    expect(r.search("file")).toEqual([]);
  });

  it("keeps its own frozen copy of a manifest", () => {
    const m = storage();
    const r = registry(m);
    m.tools[0]!.description = "changed";
    m.name = "other";
    expect(r.get("storage")?.tools[0]?.description).toMatch(/^Read the contents/);
    expect(Object.isFrozen(r.get("storage")?.tools[0])).toBe(true);
  });
});

describe("Registry: search", () => {
  it('finds a capability by its tool descriptions: "read files" → storage', () => {
    const hits = registry(net(), vcs(), storage()).search("read files");
    expect(hits[0]?.capability).toBe("storage");
  });

  it("returns the hit shape: signatures, one-line descriptions, tools best first", () => {
    const [hit] = registry(storage()).search("write file");
    expect(hit).toEqual({
      capability: "storage",
      score: expect.any(Number),
      description: "Persistent workspace state.",
      match: "ranked",
      tools: [
        {
          name: "storage.put",
          signature: "storage.put(path: string, content: string)",
          description: "Write a file, replacing it.",
          score: expect.any(Number),
        },
        {
          name: "storage.get",
          signature: "storage.get(path: string)",
          description: "Read the contents of a text file in the workspace.",
          score: expect.any(Number),
        },
      ],
    });
    expect(hit!.score).toBeGreaterThan(0);
    expect(hit!.tools[0]!.score).toBeGreaterThan(hit!.tools[1]!.score);
  });

  it("ranks an exact capability or tool name first", () => {
    // "log" also appears in vcs's tool descriptions and as a tool verb; the capability named log wins.
    const log = manifest("log", "Structured event journal.", [["append", "Add an entry.", ["text"]]]);
    const r = registry(vcs(), log, storage());
    expect(r.search("log")[0]?.capability).toBe("log");
    expect(r.search("VCS.Commit")[0]?.capability).toBe("vcs");
    expect(r.search("storage.put")[0]?.capability).toBe("storage");
  });

  it("ranks by relevance with field weights: a tool name beats a description mention", () => {
    const a = manifest("alpha", "Mentions commit once in passing.", [["noop", "Does nothing.", []]]);
    const r = registry(a, vcs());
    expect(r.search("commit").map((h) => h.capability)).toEqual(["vcs", "alpha"]);
  });

  it("splits camelCase and separators in names", () => {
    const m = {
      ...manifest("issues", "Tracker.", [["noop", "x", []]]),
      tools: [
        {
          name: "issues.create_issue",
          description: "Open a ticket.",
          inputSchema: storage().tools[0]!.inputSchema,
        },
      ],
    };
    expect(registry(m, vcs()).search("create")[0]?.capability).toBe("issues");
  });

  it("keeps the substring recall guarantee, after ranked hits", () => {
    // "ttp" is no word of any manifest, but occurs inside "HTTP" in net's description.
    const r = registry(storage(), net(), vcs());
    expect(r.search("ttp")).toEqual([
      expect.objectContaining({ capability: "net", score: 0, match: "substring" }),
    ]);
    // The whole query "to remote" occurs in net's haystack; "xyzzy" nowhere.
    expect(r.search("xyzzy").map((h) => h.capability)).toEqual([]);
    const mixed = r.search("commits ttp", { limit: 5 });
    expect(mixed.map((h) => h.capability)).toEqual(["vcs", "net"]);
    expect(mixed[0]!.score).toBeGreaterThan(0);
    expect(mixed[1]!.score).toBe(0);
    expect(mixed.map((h) => h.match)).toEqual(["ranked", "substring"]);
  });

  it("returns no hit that only stop words found (zero information)", () => {
    // No indexed word matches "is the weather on". alpha holds "weather" (inside
    // "airweatherdata"); beta holds only the stop words "is", "the", "on": not a match.
    const alpha = manifest("alpha", "Reports from airweatherdata.", [["noop", "x", []]]);
    const beta = manifest("beta", "This is the one on top.", [["noop", "x", []]]);
    const hits = registry(beta, alpha).search("is the weather on");
    expect(hits.map((h) => [h.capability, h.score, h.match])).toEqual([["alpha", 0, "substring"]]);
  });

  it("breaks recall-fallback ties by the longer description, not the name", () => {
    const alpha = manifest("alpha", "Abxqcd.", [["noop", "x", []]]);
    const beta = manifest("beta", "Efxqgh, with a longer description.", [["noop", "x", []]]);
    expect(
      registry(alpha, beta)
        .search("xq")
        .map((h) => h.capability),
    ).toEqual(["beta", "alpha"]);
  });

  it("matches profileFit entries", () => {
    expect(registry(storage(), net()).search("researcher")[0]?.capability).toBe("net");
  });

  it("respects limit (default 5) and ignores empty queries", () => {
    const r = new Registry();
    for (let i = 0; i < 8; i++) r.register(manifest(`cap${i}`, "Reads files.", [["x", "Read a file.", []]]));
    expect(r.search("file")).toHaveLength(5);
    expect(r.search("file", { limit: 2 })).toHaveLength(2);
    expect(r.search("file", { limit: 0 })).toEqual([]);
    expect(r.search("   ")).toEqual([]);
  });

  it("updates incrementally on register and unregister", () => {
    const r = registry(net(), vcs());
    expect(r.search("read files").map((h) => h.capability)).not.toContain("storage");
    r.register(storage());
    expect(r.search("read files")[0]?.capability).toBe("storage");
    r.unregister("storage");
    expect(r.search("read files").map((h) => h.capability)).not.toContain("storage");
    expect(r.search("storage")).toEqual([]);
    r.register(storage());
    expect(r.search("storage")[0]?.capability).toBe("storage");
  });

  it("stays correct across many registrations and removals", () => {
    const r = new Registry();
    for (let i = 0; i < 300; i++)
      r.register(manifest(`cap${i}`, `Capability number ${i}.`, [["run", `Tool ${i}.`, []]]));
    for (let i = 0; i < 300; i += 2) r.unregister(`cap${i}`);
    expect(r.size).toBe(150);
    // cap10 is gone; prefix and typo matching of the now unknown word still reach cap101, cap11, …
    // but never a removed (even-numbered) capability.
    const hits = r.search("cap10", { limit: 20 }).map((h) => h.capability);
    expect(hits).toContain("cap101");
    expect(hits.every((h) => /[13579]$/.test(h))).toBe(true);
    expect(r.search("cap11")[0]?.capability).toBe("cap11");
  });
});

describe("Registry.tool", () => {
  it("finds native and MCP tools by their full names", async () => {
    const { Registry: R } = await import("./registry.js");
    const r = new R();
    r.register({
      name: "notes",
      version: "1.0.0",
      description: "Keep notes in the workspace.",
      profileFit: [],
      tools: [
        {
          name: "notes.add",
          description: "Add a note.",
          risk: "write",
          inputSchema: { type: "object", additionalProperties: false, properties: {} },
        },
      ],
    });
    r.registerMcpServer("gh", [
      { name: "create_issue", description: "Open an issue.", annotations: { readOnlyHint: false } },
    ]);
    expect(r.tool("notes.add")?.risk).toBe("write");
    expect(r.tool("gh/create_issue")?.risk).toBe("exec");
    expect(r.tool("notes.remove")).toBeUndefined();
    expect(r.tool("nope")).toBeUndefined();
    expect(r.tool("zz/x")).toBeUndefined();
  });
});

describe("Registry: search v2 (issue 11)", () => {
  const sql = () =>
    manifest("sql", "Run SQL against a database.", [["query", "Run a SQL statement.", ["sql"]]]);
  const azure = () =>
    manifest("azure", "Azure resources.", [
      ["mysql_list", "List the servers of a flexible server deployment.", []],
      ["vm_list", "List virtual machines.", []],
    ]);

  it("ranks the capability whose identifier says mysql first for a MySQL query", () => {
    const r = registry(sql(), azure());
    expect(r.search("list MySQL servers")[0]?.capability).toBe("azure");
    expect(r.search("MySQL")[0]?.capability).toBe("azure");
  });

  it("never returns a zero-score ranked hit: 'think step by step' finds nothing here", () => {
    const r = registry(storage(), net(), vcs());
    expect(r.search("think step by step")).toEqual([]);
    expect(r.search("think step by step", { level: "tool" })).toEqual([]);
  });

  it("does not let 'located' match 'local' or 'allocate'", () => {
    const a = manifest("builds", "Run local builds.", [["start", "Allocate a worker.", []]]);
    expect(registry(a).search("where is it located")).toEqual([]);
  });

  it("orders each hit's tools by relevance, best first", () => {
    const m = manifest("docs", "Documents.", [
      ["open", "Open a document for reading.", []],
      ["print", "Send a document to the printer.", []],
      ["translate", "Translate a document into another language.", []],
    ]);
    const [hit] = registry(m).search("translate this document to French");
    expect(hit?.tools.map((t) => t.name)).toEqual(["docs.translate", "docs.open", "docs.print"]);
    expect(hit?.tools[0]?.description).toBe("Translate a document into another language.");
  });

  it("ranks tools directly across capabilities with level: tool", () => {
    const r = registry(storage(), net(), vcs());
    const hits = r.search("download a web page", { level: "tool" });
    expect(hits[0]).toMatchObject({ capability: "net", tool: "net.fetch", match: "ranked" });
    expect(hits[0]?.tools).toEqual([
      expect.objectContaining({ name: "net.fetch", signature: "net.fetch(url: string)" }),
    ]);
    const names = r.search("commit log", { level: "tool", limit: 10 }).map((h) => h.tool);
    expect(names.slice(0, 2).sort()).toEqual(["vcs.commit", "vcs.log"]);
    expect(r.search("storage.put", { level: "tool" })[0]?.tool).toBe("storage.put");
  });

  it("puts substring-only tools after ranked ones, marked", () => {
    const hits = registry(storage(), net(), vcs()).search("commits ttp", { level: "tool", limit: 10 });
    const matches = hits.map((h) => h.match);
    expect(matches[0]).toBe("ranked");
    expect(hits.find((h) => h.match === "substring")?.tool).toBe("net.fetch");
    expect(matches.lastIndexOf("ranked")).toBeLessThan(matches.indexOf("substring"));
  });
});

describe("Registry: an optional ranker", () => {
  // A real (tiny) ranker: texts embedded as bags of concept ids, cosine similarity.
  const concepts: Record<string, string> = {
    car: "vehicle",
    automobile: "vehicle",
    auto: "vehicle",
    weather: "sky",
    rain: "sky",
    forecast: "sky",
  };
  function embed(text: string): Map<string, number> {
    const v = new Map<string, number>();
    for (const w of text.toLowerCase().split(/[^a-z]+/)) {
      const c = concepts[w];
      if (c) v.set(c, (v.get(c) ?? 0) + 1);
    }
    return v;
  }
  const cos = (a: Map<string, number>, b: Map<string, number>) => {
    let d = 0;
    for (const [k, x] of a) d += x * (b.get(k) ?? 0);
    const n = (m: Map<string, number>) => Math.sqrt([...m.values()].reduce((s, x) => s + x * x, 0));
    return d === 0 ? 0 : d / (n(a) * n(b));
  };
  let indexes = 0;
  const ranker: SearchRanker = {
    name: "concepts",
    createIndex() {
      indexes++;
      const docs = new Map<string, Map<string, number>>();
      return {
        add: (doc) => void docs.set(doc.id, embed(doc.texts.join(" "))),
        remove: (id) => docs.delete(id),
        get size() {
          return docs.size;
        },
        query(text) {
          const q = embed(text);
          if (q.size === 0) return undefined;
          return {
            similarity: (id) => (docs.has(id) ? cos(q, docs.get(id)!) : undefined),
            nearest: (k) =>
              [...docs]
                .map(([id, v]) => ({ id, similarity: cos(q, v) }))
                .sort((a, b) => b.similarity - a.similarity)
                .slice(0, k),
          };
        },
      };
    },
  };
  const cars = () => manifest("garage", "Vehicle service records.", [["book", "Book a car service.", []]]);
  const sky = () => manifest("meteo", "Forecast data.", [["today", "Today's forecast.", []]]);

  it("finds by similarity what shares no word with the query, only when on", () => {
    expect(registry(cars(), sky()).search("automobile")).toEqual([]);
    const r = new Registry({ ranker });
    r.register(cars());
    r.register(sky());
    expect(r.ranker?.name).toBe("concepts");
    expect(r.search("automobile").map((h) => [h.capability, h.match])).toEqual([["garage", "ranked"]]);
    expect(r.search("rain", { level: "tool" })[0]?.tool).toBe("meteo.today");
    // Blended: the lexical match and the similar one both come, the lexical one first.
    expect(r.search("forecast").map((h) => h.capability)).toEqual(["meteo"]);
  });

  it("keeps the ranker's indexes in step with register and unregister", () => {
    const before = indexes;
    const r = new Registry({ ranker });
    r.register(cars());
    // Made on the first search, not before: a process that only calls tools never indexes.
    expect(indexes - before).toBe(0);
    expect(r.search("auto")[0]?.capability).toBe("garage");
    expect(indexes - before).toBe(2);
    r.unregister("garage");
    expect(r.search("auto")).toEqual([]);
    r.register(cars());
    r.register(sky());
    expect(r.search("auto")[0]?.capability).toBe("garage");
    expect(indexes - before).toBe(2);
  });

  it("gives the ranker less say the more of the request one document's words cover", () => {
    // A ranker that always finds get_team nearer, as word vectors do for near-identical
    // siblings whose descriptions differ by noise.
    const leaning: SearchRanker = {
      name: "leaning",
      weight: 0.7,
      createIndex() {
        const ids = new Set<string>();
        return {
          add: (doc) => void ids.add(doc.id),
          remove: (id) => ids.delete(id),
          get size() {
            return ids.size;
          },
          query: () => ({
            similarity: (id) => (ids.has(id) ? (id.endsWith("get_team") ? 0.9 : 0.2) : undefined),
            nearest: (k) =>
              [...ids]
                .map((id) => ({ id, similarity: id.endsWith("get_team") ? 0.9 : 0.2 }))
                .sort((a, b) => b.similarity - a.similarity)
                .slice(0, k),
          }),
        };
      },
    };
    const teams = () =>
      manifest("teams", "People and teams.", [
        ["list_teams", "List the teams.", []],
        ["get_team", "Show one team.", []],
      ]);
    const r = new Registry({ ranker: leaning });
    r.register(teams());
    r.register(cars());
    // "list teams": all of it in list_teams' words, so the lexical order stands (at a fixed
    // share of 0.7, get_team's similarity would win: it matches "teams" too).
    expect(r.search("list teams", { level: "tool" })[0]?.tool).toBe("teams.list_teams");
    // A request in other words than the index's ("every group of people" covers little):
    // the ranker decides.
    expect(r.search("every group of people on the teams", { level: "tool" })[0]?.tool).toBe("teams.get_team");
    // The same rule orders a capability hit's own tools.
    expect(r.search("list teams")[0]?.tools.map((t) => t.name)).toEqual([
      "teams.list_teams",
      "teams.get_team",
    ]);
    expect(r.search("every group of people on the teams")[0]?.tools[0]?.name).toBe("teams.get_team");
  });

  it("searches the same whether changes came before or after its first search", () => {
    const eager = new Registry({ ranker });
    eager.search("warm up"); // empty: no index yet
    eager.register(sky());
    eager.search("forecast"); // indexed from here on: every change below is incremental
    eager.register(cars());
    eager.unregister("meteo");
    eager.register(sky());
    const lazy = new Registry({ ranker });
    lazy.register(sky());
    lazy.register(cars());
    lazy.unregister("meteo");
    lazy.register(sky());
    for (const q of ["auto", "forecast", "rain", "today", "car garage weather"]) {
      expect(lazy.search(q)).toEqual(eager.search(q));
      expect(lazy.search(q, { level: "tool" })).toEqual(eager.search(q, { level: "tool" }));
    }
  });
});
