import { Router } from "@capgate/router";
import type { CapabilityManifest } from "@capgate/schema";

const fs: CapabilityManifest = {
  name: "fs",
  version: "0.1.0",
  description: "Read and patch files in the workspace.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "fs.read",
      description: "Read a text file.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: { type: "string" }, offset: { type: "integer" }, limit: { type: "integer" } },
        required: ["path"],
      },
    },
  ],
};

// An MCP server's tools load like native ones, named <server>/<tool>.
const github: CapabilityManifest = {
  name: "mcp:github",
  version: "1.0.0",
  description: "Tools of the configured 'github' MCP server.",
  profileFit: [],
  tools: [
    {
      name: "github/search_issues",
      description: "Search issues.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { q: { type: "string" } },
        required: ["q"],
      },
    },
  ],
};

/** Load two capabilities and return what the model would see, then drop one. */
export function loadedSetExample(): { loaded: string[]; signatures: string[]; afterUnload: string[] } {
  const router = new Router();
  router.load(github);
  router.load(fs);
  const loaded = router.loaded(); // ["fs", "mcp:github"]
  const signatures = router.loadedSignatures();
  // ["fs.read(path: string, offset?: integer, limit?: integer)", "github/search_issues(q: string)"]
  router.unload("fs");
  return { loaded, signatures, afterUnload: router.loaded() };
}
