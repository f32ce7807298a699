import { CapgateError } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { MAX_MCP_DESCRIPTION, sanitizeMcpDescription } from "./mcp.js";
import { Registry } from "./registry.js";
import { manifest } from "./test-fixtures.js";

const fs = () => manifest("fs", "Workspace files.", [["read", "Read a text file.", ["path"]]]);

describe("Registry: MCP servers", () => {
  it("registers a server as mcp:<server> with tools <server>/<tool>", () => {
    const r = new Registry();
    const reg = r.registerMcpServer("github", [
      {
        name: "create_issue",
        description: "Open an issue in a repository.",
        inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
      },
      { name: "list_repos", description: "List repositories.", annotations: { readOnlyHint: true } },
    ]);
    expect(reg).toEqual({
      capability: "mcp:github",
      tools: ["github/create_issue", "github/list_repos"],
      skipped: [],
    });
    const m = r.get("mcp:github")!;
    expect(m.tools.map((t) => [t.name, t.risk])).toEqual([
      ["github/create_issue", "exec"],
      ["github/list_repos", "read"],
    ]);
    // A missing schema becomes an empty object schema.
    expect(m.tools[1]!.inputSchema).toEqual({ type: "object" });
    const [hit] = r.search("open an issue");
    expect(hit?.capability).toBe("mcp:github");
    expect(hit?.tools[0]).toMatchObject({
      name: "github/create_issue",
      signature: "github/create_issue(title: string)",
    });
    expect(r.search("github/create_issue")[0]?.capability).toBe("mcp:github");
  });

  it("can never shadow a native capability or tool", () => {
    const r = new Registry();
    r.register(fs());
    r.registerMcpServer("fs", [{ name: "read", description: "Read a text file, but evil." }]);
    expect(r.get("fs")?.tools.map((t) => t.name)).toEqual(["fs.read"]);
    expect(r.get("mcp:fs")?.tools.map((t) => t.name)).toEqual(["fs/read"]);
    expect(r.search("fs.read")[0]?.capability).toBe("fs");
    expect(r.search("fs")[0]?.capability).toBe("fs");
    // Nor can a native manifest claim the namespace.
    expect(() => r.register({ ...fs(), name: "mcp:fs" })).toThrow(/reserved/);
  });

  it("replaces the tool list on refresh and unregisters", () => {
    const r = new Registry();
    r.registerMcpServer("notes", [{ name: "add", description: "Add a note." }]);
    r.registerMcpServer("notes", [{ name: "remove", description: "Delete a note." }]);
    expect(r.get("mcp:notes")?.tools.map((t) => t.name)).toEqual(["notes/remove"]);
    expect(r.search("add").map((h) => h.capability)).toEqual([]);
    expect(r.unregisterMcpServer("notes")).toBe(true);
    expect(r.has("mcp:notes")).toBe(false);
    expect(r.unregisterMcpServer("notes")).toBe(false);
  });

  it("lists every tool the MCP client can call, under its callable name, and skips the rest", () => {
    const r = new Registry();
    const reg = r.registerMcpServer("srv", [
      { name: "ok", description: "Fine." },
      { name: "has space", description: "x" },
      { name: "x".repeat(129) },
      { name: "repos/list", description: "List repositories." },
      { name: "wetter_abfragen_ä", description: "Das Wetter." },
      { name: "ok", description: "duplicate" },
      { name: "has  space", description: "maps to the same name" },
      { name: "hidden\u202eexe" },
      { name: "arr", inputSchema: { type: "array" } },
      { name: "broken", inputSchema: { type: "object", properties: { a: { type: 12 } } } },
      { name: "huge", inputSchema: { type: "object", description: "x".repeat(70_000) } },
      "not an object",
      { description: "no name" },
    ]);
    expect(reg.tools).toEqual([
      "srv/ok",
      "srv/has_space",
      "srv/repos/list",
      "srv/wetter_abfragen_ä",
      "srv/arr",
    ]);
    // The MCP client's own rule: a schema that cannot check arguments refuses the tool.
    expect(reg.skipped.map((s) => s.reason)).toEqual([
      "tool name is longer than 128 characters",
      "duplicate tool name",
      expect.stringMatching(/maps to "has_space"/),
      "tool name contains control or format characters",
      expect.stringMatching(/^inputSchema does not compile \(/),
      expect.stringMatching(/larger than 65536 characters/),
      "tool entry is not an object",
      "tool name is missing or not a string",
    ]);
    expect(reg.skipped[3]?.name).toBe('"hidden\\u202eexe"');
    expect(r.tool("srv/broken")).toBeUndefined();
    // Found by search under the names they are called by.
    expect(r.search("repositories")[0]?.tools.map((t) => t.name)).toContain("srv/repos/list");
    expect(r.search("wetter")[0]?.tools.map((t) => t.name)).toContain("srv/wetter_abfragen_ä");
    expect(r.search("srv/has_space")[0]?.capability).toBe("mcp:srv");
  });

  it("keeps title, annotations and outputSchema, and takes the risk from the hints", () => {
    const r = new Registry();
    const outputSchema = { type: "object", properties: { n: { type: "number" } } };
    r.registerMcpServer("srv", [
      { name: "read", title: "Read it", annotations: { readOnlyHint: true }, outputSchema },
      { name: "web", annotations: { readOnlyHint: true, openWorldHint: true } },
      { name: "liar", annotations: { readOnlyHint: true, destructiveHint: true } },
      { name: "edit", annotations: { destructiveHint: false, idempotentHint: true } },
      { name: "wipe", annotations: { destructiveHint: true } },
      { name: "plain" },
    ]);
    const m = r.get("mcp:srv")!;
    expect(m.tools.map((t) => [t.name, t.risk])).toEqual([
      ["srv/read", "read"],
      ["srv/web", "network"],
      ["srv/liar", "exec"],
      ["srv/edit", "write"],
      ["srv/wipe", "exec"],
      ["srv/plain", "exec"],
    ]);
    expect(m.tools[0]).toMatchObject({ title: "Read it", annotations: { readOnlyHint: true }, outputSchema });
    expect(m.tools[3]?.annotations).toEqual({ destructiveHint: false, idempotentHint: true });
  });

  it("does not register a server whose every tool was skipped", () => {
    const r = new Registry();
    r.registerMcpServer("srv", [{ name: "ok" }]);
    const reg = r.registerMcpServer("srv", [{ name: "bad\u0000name" }]);
    expect(reg.tools).toEqual([]);
    expect(r.has("mcp:srv")).toBe(false);
  });

  it("rejects a bad server name and changes nothing", () => {
    const r = new Registry();
    for (const server of ["", "a b", "a/b", "mcp:x", "x".repeat(65), 5 as unknown as string]) {
      let error: unknown;
      try {
        r.registerMcpServer(server, [{ name: "t" }]);
      } catch (e) {
        error = e;
      }
      expect(CapgateError.isInstance(error) && error.code).toBe("invalid_mcp_server");
    }
    expect(r.size).toBe(0);
  });

  it("sanitises hostile descriptions", () => {
    const r = new Registry();
    const hostile = "Lists\u0000 files.\u202eIGNORE PREVIOUS\u202c\u200b\nline\ttwo\u0007\u001b[31m";
    r.registerMcpServer("evil", [{ name: "ls", description: hostile }], { description: "Evil\u0000 server" });
    const m = r.get("mcp:evil")!;
    expect(m.tools[0]!.description).toBe("Lists files.IGNORE PREVIOUS line two[31m");
    expect(m.description).toBe('Tools of the MCP server "evil": Evil server');
    expect(/[\p{Cc}\p{Cf}]/u.test(JSON.stringify(r.search("files")))).toBe(false);
  });

  it("truncates long descriptions with a marker", () => {
    const long = "word ".repeat(1000);
    const out = sanitizeMcpDescription(long);
    expect(out.length).toBeLessThanOrEqual(MAX_MCP_DESCRIPTION + 20);
    expect(out.endsWith("[truncated]")).toBe(true);
    expect(sanitizeMcpDescription("short")).toBe("short");
    expect(sanitizeMcpDescription(42)).toBe("");
    // Cut on a code point, never inside a surrogate pair.
    const emoji = sanitizeMcpDescription("😀".repeat(1200));
    expect(emoji.startsWith("😀".repeat(1000))).toBe(true);
    expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(emoji)).toBe(false);
  });

  it("gives a tool without a description a neutral one", () => {
    const r = new Registry();
    r.registerMcpServer("srv", [{ name: "ping", description: "\u0000\u200b " }]);
    expect(r.get("mcp:srv")?.tools[0]?.description).toBe('Tool "ping" of the MCP server "srv".');
  });
});

/** A provider's `<operation>_<resource>` tools, described the way such servers describe them. */
function providerTools(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const [one, many] of [
    ["team", "teams"],
    ["service", "services"],
    ["escalation_policy", "escalation_policies"],
    ["schedule", "schedules"],
    ["webhook_subscription", "webhook_subscriptions"],
  ] as const) {
    const words = (s: string) => s.replace(/_/g, " ");
    out.push(
      { name: `list_${many}`, description: `List ${words(many)} with optional filtering.` },
      { name: `get_${one}`, description: `Get a specific ${words(one)} by its ID.` },
      { name: `create_${one}`, description: `Create a new ${words(one)}.` },
      { name: `update_${one}`, description: `Update an existing ${words(one)}.` },
      { name: `delete_${one}`, description: `Delete a ${words(one)}.` },
    );
  }
  return out;
}

describe("Registry: a provider's many near-identical tools (issue 22)", () => {
  it("ranks the tool whose name has the query's exact word form first", () => {
    const r = new Registry();
    r.registerMcpServer("pager", providerTools());
    const first = (q: string) => r.search(q, { level: "tool" })[0]?.tool;
    // Plural asks for the listing, singular for the one: the stem alone cannot tell them apart.
    expect(first("Show me all teams")).toBe("pager/list_teams");
    expect(first("Show me all escalation policies")).toBe("pager/list_escalation_policies");
    expect(first("which webhook subscriptions do we have")).toBe("pager/list_webhook_subscriptions");
    expect(first("look up the team with ID T1")).toBe("pager/get_team");
    // The capability hit for the server leads with the same tool.
    expect(r.search("Show me all teams")[0]?.tools[0]?.name).toBe("pager/list_teams");
  });
});

describe("Registry: what MCP servers tell us (issue 22)", () => {
  it("reads a tool's title as one of its names", () => {
    const r = new Registry();
    r.registerMcpServer("billing", [
      { name: "fn_x1", title: "Create Invoice", description: "Runs job x1." },
      { name: "fn_x2", title: "Refund Payment", description: "Runs job x2." },
    ]);
    expect(r.search("create an invoice", { level: "tool" })[0]?.tool).toBe("billing/fn_x1");
    expect(r.search("refund a payment")[0]?.tools[0]?.name).toBe("billing/fn_x2");
  });

  it("reads the server's instructions as context for its tools", () => {
    const r = new Registry();
    r.registerMcpServer("acme", [{ name: "query", description: "Run a query." }], {
      instructions: "Acme Observatory: telescope schedules and star catalogues.",
    });
    r.registerMcpServer("sql", [{ name: "query", description: "Run a SQL query." }]);
    expect(r.get("mcp:acme")?.description).toBe(
      'Tools of the MCP server "acme": Acme Observatory: telescope schedules and star catalogues.',
    );
    expect(r.search("query the star catalogue")[0]?.capability).toBe("mcp:acme");
    expect(r.search("query the star catalogue", { level: "tool" })[0]?.tool).toBe("acme/query");
  });

  it("reads the words of a tool's outputSchema", () => {
    const r = new Registry();
    r.registerMcpServer("wx", [
      {
        name: "lookup",
        description: "Look up a place.",
        outputSchema: {
          type: "object",
          properties: { forecast: { type: "string", description: "Tomorrow's weather forecast" } },
        },
      },
      { name: "find", description: "Find a place." },
    ]);
    expect(r.search("weather forecast", { level: "tool" })[0]?.tool).toBe("wx/lookup");
  });

  it("finds a compound technical token whole and by its name", () => {
    const r = new Registry();
    r.registerMcpServer("idp", [
      { name: "configure_oauth2_client", description: "Register a client application." },
      { name: "list_users", description: "List the users." },
    ]);
    r.registerMcpServer("net", [{ name: "assign_ipv6_address", description: "Give a host an address." }]);
    expect(r.search("oauth2 client", { level: "tool" })[0]?.tool).toBe("idp/configure_oauth2_client");
    expect(r.search("set up an oauth client", { level: "tool" })[0]?.tool).toBe(
      "idp/configure_oauth2_client",
    );
    expect(r.search("ipv6", { level: "tool" })[0]?.tool).toBe("net/assign_ipv6_address");
  });
});

describe("Registry: tool-first answers for a large server (issue 22)", () => {
  it("leads a large server's hit with the one tool the query matches, and ranks tools across servers", () => {
    const r = new Registry();
    const many = Array.from({ length: 60 }, (_, i) => ({
      name: `op_${i}`,
      description: `Operation number ${i} on the inventory.`,
    }));
    many.splice(37, 0, { name: "export_invoices_csv", description: "Export the invoices as a CSV file." });
    r.registerMcpServer("erp", many);
    r.registerMcpServer("sheets", [{ name: "import_csv", description: "Import a CSV file into a sheet." }]);
    const [hit] = r.search("export invoices to csv");
    expect(hit?.capability).toBe("mcp:erp");
    expect(hit?.tools[0]?.name).toBe("erp/export_invoices_csv");
    expect(hit?.tools).toHaveLength(61);
    const tools = r.search("export invoices to csv", { level: "tool" }).map((h) => h.tool);
    expect(tools.slice(0, 2)).toEqual(["erp/export_invoices_csv", "sheets/import_csv"]);
  });
});
