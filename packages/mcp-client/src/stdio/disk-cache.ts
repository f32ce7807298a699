import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ToolListCache } from "../pool-types.js";
import { type McpToolInfo, normalizeToolList } from "../tool-list.js";

interface CacheFile {
  server: string;
  configHash: string;
  savedAt: string;
  tools: Array<{
    name: string;
    description: string;
    inputSchema: unknown;
    annotations: { readOnlyHint: boolean };
  }>;
}

/**
 * Tool lists on disk under `<stateDir>/mcp-tools/<server>@<config hash>.json`, so search
 * can index a server's tools before it is started. A changed config entry changes the
 * hash, so its old list is never served (and is removed on the next save). Lists are
 * re-normalised on load, so an edited file cannot smuggle in hostile names.
 */
export function fileToolListCache(stateDir: string): ToolListCache {
  const dir = join(stateDir, "mcp-tools");
  const fileOf = (server: string, hash: string) => join(dir, `${server}@${hash}.json`);
  return {
    async load(server, configHash) {
      let text: string;
      try {
        text = await readFile(fileOf(server, configHash), "utf8");
      } catch {
        return undefined;
      }
      try {
        const parsed = JSON.parse(text) as Partial<CacheFile>;
        if (parsed.server !== server || parsed.configHash !== configHash || !Array.isArray(parsed.tools))
          return undefined;
        return normalizeToolList(server, parsed.tools).tools;
      } catch {
        return undefined;
      }
    },
    async save(server, configHash, tools: McpToolInfo[]) {
      await mkdir(dir, { recursive: true });
      const body: CacheFile = {
        server,
        configHash,
        savedAt: new Date().toISOString(),
        tools: tools.map((t) => ({
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          annotations: { readOnlyHint: t.risk === "read" },
        })),
      };
      const target = fileOf(server, configHash);
      const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
      await writeFile(temp, `${JSON.stringify(body)}\n`);
      await rename(temp, target);
      for (const name of await readdir(dir))
        if (name.startsWith(`${server}@`) && name.endsWith(".json") && join(dir, name) !== target)
          await rm(join(dir, name), { force: true });
    },
  };
}
