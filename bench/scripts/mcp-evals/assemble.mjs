import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

// Run in a directory holding lists/<server>.json (list-tools.mjs), pagerduty-raw.json
// (extract-pagerduty.py) and mongodb-queries.json (extract-mongodb.mjs); writes mcp-evals.json.gz.
// PagerDuty is not runnable here (Python, no PyPI): its instructions are copied from server.py.
const list = (n) => JSON.parse(readFileSync(`lists/${n}.json`, "utf8"));
const pd = JSON.parse(readFileSync("pagerduty-raw.json", "utf8"));
const pdInstructions =
  "When the user asks for information about their resources, first get the user data and scope any\nrequests using the user id.\n\nREAD operations are safe to use, but be cautious with WRITE operations as they can modify the\nlive environment. Always confirm with the user before using any tool marked as destructive.";
const servers = [
  {
    name: "pagerduty",
    serverInfo: { name: "PagerDuty MCP Server" },
    instructions: pdInstructions,
    tools: pd.tools,
  },
  ...["mongodb", "filesystem", "memory", "everything", "sequential-thinking", "github", "playwright"].map(
    (n) => {
      const j = list(n);
      return {
        name: n,
        serverInfo: j.serverInfo,
        ...(j.instructions ? { instructions: j.instructions } : {}),
        tools: j.tools,
      };
    },
  ),
];
const mongoTools = new Set(servers[1].tools.map((t) => t.name));
const queries = [
  ...pd.queries.map((q) => ({ query: q.query, server: "pagerduty", tools: q.tools })),
  ...JSON.parse(readFileSync("mongodb-queries.json", "utf8"))
    .map((q) => ({ query: q.query, server: "mongodb", tools: q.tools.filter((t) => mongoTools.has(t)) }))
    .filter((q) => q.tools.length > 0),
];
const bundle = { servers, queries };
writeFileSync("mcp-evals.json.gz", gzipSync(JSON.stringify(bundle), { level: 9 }));
console.log(servers.map((s) => `${s.name}:${s.tools.length}`).join(" "), queries.length);
