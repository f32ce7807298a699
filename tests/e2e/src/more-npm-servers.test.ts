import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  capabilityCall,
  type Sandbox,
  sandbox,
  serverEntry,
  stdioGateOn,
  resultText as text,
} from "./support.js";

// Three more npm servers of the issue 20 survey behind the gate, each in a block of its own
// with one `capgate mcp serve` (gateForBlock). First, an MCP Apps server:
// @modelcontextprotocol/server-pdf 2.0.4. Six of its nine tools are for its viewer app only (_meta.ui.visibility: ["app"]); with --stdio it
// reads local PDFs under the client's roots, which the gate declares as the workspace.

/** A one-page PDF with one line of text, byte offsets computed as the format wants. */
function onePagePdf(line: string): string {
  const stream = `BT /F1 24 Tf 72 700 Td (${line}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  return `${out}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

const APP_ONLY = [
  "read_pdf_bytes",
  "submit_page_data",
  "submit_save_data",
  "submit_viewer_state",
  "poll_pdf_commands",
  "save_pdf",
];

/** One `capgate mcp serve` on the sandbox `box()` makes, for the describe block this is called in. */
function gateForBlock(box: () => Sandbox): () => Client {
  let client: Client | undefined;
  beforeAll(async () => {
    client = await stdioGateOn(box());
  }, 120_000);
  afterAll(async () => {
    await client?.close();
  });
  return () => client as Client;
}

const search = async (client: Client, query: string, limit?: number) =>
  text(
    await client.callTool({
      name: "capability_search",
      arguments: limit === undefined ? { query } : { query, limit },
    }),
  );

describe("server-pdf (an MCP Apps server) behind capgate mcp serve", () => {
  let workspace = "";
  const gate = gateForBlock(() => {
    const box = sandbox(
      { mcpServers: { pdf: { command: process.execPath, args: [serverEntry("server-pdf"), "--stdio"] } } },
      { "docs/report.pdf": onePagePdf("Quarterly report 4711") },
    );
    workspace = box.workspace;
    return box;
  });
  const call = (tool: string, args: Record<string, unknown>) => capabilityCall(gate(), tool, args);

  it("offers the model's tools and none of the app's", async () => {
    const found = await search(gate(), "open and display a pdf document", 10);
    expect(found).toContain("pdf/display_pdf(");
    expect(found).toContain("pdf/list_pdfs(");
    for (const name of APP_ONLY) expect(found).not.toContain(`pdf/${name}`);
    const loaded = text(await gate().callTool({ name: "capability_load", arguments: { name: "mcp:pdf" } }));
    expect(loaded).toContain("pdf/interact(");
    for (const name of APP_ONLY) expect(loaded).not.toContain(`pdf/${name}`);
  }, 120_000);

  it("refuses an app-only tool from the model before anything reaches the server", async () => {
    const refused = await call("pdf/read_pdf_bytes", { url: `file://${workspace}/docs/report.pdf` });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/read_pdf_bytes.*app only/);
  }, 60_000);

  it("reads PDFs under the roots the gate declares (the workspace) and nowhere else", async () => {
    const listed = await call("pdf/list_pdfs", {});
    expect(listed.isError ?? false, text(listed)).toBe(false);
    expect(text(listed)).toContain(`file://${workspace}/docs/report.pdf`);
    expect(text(listed)).toContain(`Allowed local directories:\n- ${workspace}`);

    const opened = await call("pdf/display_pdf", { url: `file://${workspace}/docs/report.pdf` });
    expect(opened.isError ?? false, text(opened)).toBe(false);
    expect(text(opened)).toMatch(/PDF opened\. viewUUID: [0-9a-f-]{36}/);

    const outside = await call("pdf/display_pdf", { url: "file:///etc/passwd" });
    expect(outside.isError).toBe(true);
    expect(text(outside)).toContain("not in allowed list");
  }, 120_000);
});

// context7 (@upstash/context7-mcp 4.1.1): long server instructions, two tools whose schemas
// the gate enforces, and an upstream API that CI cannot reach — its own error must come
// back as the server's answer, not hang or turn into a gate failure.
describe("context7 behind capgate mcp serve", () => {
  const gate = gateForBlock(() => {
    // The package has neither "main" nor "exports": its bin is the entry.
    const entry = join(
      dirname(createRequire(import.meta.url).resolve("@upstash/context7-mcp/package.json")),
      "dist",
      "index.js",
    );
    return sandbox({ mcpServers: { context7: { command: process.execPath, args: [entry] } } });
  });

  it("is found for library documentation, with its tools' signatures", async () => {
    const found = await search(gate(), "up to date documentation for a library");
    expect(found).toContain("context7/resolve-library-id(query: string, libraryName: string)");
    expect(found).toContain("context7/query-docs(libraryId: string, query: string)");
  }, 120_000);

  it("checks its schema at the gate: a missing property is named and nothing is sent", async () => {
    const r = await capabilityCall(gate(), "context7/resolve-library-id", { libraryName: "react" });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/`query` missing required property `query`.*Nothing was sent to the server/s);
  }, 60_000);

  it("passes the server's own answer through when its API is out of reach", async () => {
    const r = await capabilityCall(gate(), "context7/resolve-library-id", {
      libraryName: "react",
      query: "hooks",
    });
    // Offline (CI): the server's "Error searching libraries: … fetch failed"; online: its results.
    expect(text(r)).toMatch(/librar/i);
    expect(text(r)).not.toMatch(/Invalid arguments|timed out/);
  }, 120_000);
});

// sequential-thinking: one tool with a nested schema of required numbers and booleans, and
// a server that keeps state across calls within its session.
describe("sequential-thinking behind capgate mcp serve", () => {
  const gate = gateForBlock(() =>
    sandbox({
      mcpServers: {
        thinking: { command: process.execPath, args: [serverEntry("server-sequential-thinking")] },
      },
    }),
  );
  const call = (tool: string, args: Record<string, unknown>) => capabilityCall(gate(), tool, args);

  it("is found, refuses a wrong type at the gate, and keeps its thought history across calls", async () => {
    const found = await search(gate(), "think through a problem step by step");
    expect(found).toContain("thinking/sequentialthinking(");
    const thought = (n: number) => ({
      thought: `step ${n}`,
      thoughtNumber: n,
      totalThoughts: 2,
      nextThoughtNeeded: n < 2,
    });
    const wrong = await call("thinking/sequentialthinking", { ...thought(1), thoughtNumber: "one" });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toMatch(/thoughtNumber/);
    const first = await call("thinking/sequentialthinking", thought(1));
    expect(first.isError ?? false, text(first)).toBe(false);
    const second = await call("thinking/sequentialthinking", thought(2));
    expect(JSON.parse(text(second))).toMatchObject({ thoughtNumber: 2, thoughtHistoryLength: 2 });
  }, 120_000);
});
