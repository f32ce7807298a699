import { createTextIndex, Registry, validateManifest } from "@capgate/registry";
import type { CapabilityManifest } from "@capgate/schema";

const files: CapabilityManifest = {
  name: "files",
  version: "1.0.0",
  description: "Workspace storage.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "files.get",
      description: "Read a text file from the workspace. Use offset/limit for large files.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: { type: "string" }, offset: { type: "integer" }, limit: { type: "integer" } },
        required: ["path"],
      },
      risk: "read",
    },
  ],
};

// Lint a manifest: every problem, each with its path.
const lint = validateManifest({ ...files, name: "Files" });
for (const p of lint.problems) console.log(`${p.path}: ${p.message}`);

const registry = new Registry();
registry.register(files);

// MCP servers' tools join the search under mcp:<server>, tools named <server>/<tool>.
registry.registerMcpServer("github", [
  {
    name: "create_issue",
    description: "Open an issue in a repository.",
    annotations: { readOnlyHint: false },
  },
]);

// "read files" finds `files` through its tool description.
for (const hit of registry.search("read files", { limit: 3 })) {
  console.log(hit.capability, hit.score.toFixed(2), hit.tools.map((t) => t.signature).join("; "));
}

// The same ranked search for any other documents, e.g. notes.
const notes = createTextIndex<{ id: string; text: string; tags: string[] }>({
  id: (n) => n.id,
  fields: { text: (n) => n.text, tags: (n) => n.tags },
  weights: { text: 1, tags: 2 },
});
notes.add({ id: "n1", text: "The deploy script needs NODE_ENV=production.", tags: ["deploy"] });
console.log(notes.search("deploying", 5));
