import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { SERVER_NAME_PATTERN } from "../config.js";
import { McpClientError } from "../errors.js";
import type { McpAuthStore, StoredMcpAuth } from "../oauth/auth-store.js";

function fileOf(dir: string, server: string): string {
  // Server names are validated by the config parser; checked again so no name can leave the directory.
  if (!SERVER_NAME_PATTERN.test(server))
    throw new McpClientError("invalid_config", `'${server}' is not a valid MCP server name.`, { server });
  return join(dir, `${server}.json`);
}

/**
 * OAuth state under `<home>/mcp-auth/<server>.json` (home: `$CAPGATE_HOME`). The directory
 * is 0700 and each file 0600, written to a temp file created 0600 and renamed over the old
 * one, so a reader never sees half a file and no other user ever can read a token.
 */
export function fileAuthStore(home: string): McpAuthStore {
  const dir = join(home, "mcp-auth");
  const ensureDir = async () => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir's mode does not apply to a directory that already existed.
    await chmod(dir, 0o700);
  };
  return {
    async load(server) {
      let text: string;
      try {
        text = await readFile(fileOf(dir, server), "utf8");
      } catch {
        return undefined;
      }
      try {
        const parsed = JSON.parse(text) as StoredMcpAuth;
        return parsed && parsed.version === 1 && parsed.server === server ? parsed : undefined;
      } catch {
        return undefined;
      }
    },
    async save(server, data) {
      await ensureDir();
      const target = fileOf(dir, server);
      const temp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
      const handle = await open(temp, "wx", 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(data)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
    },
    async delete(server) {
      await rm(fileOf(dir, server), { force: true });
    },
  };
}
