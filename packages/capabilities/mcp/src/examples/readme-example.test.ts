import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { describe, expect, it, vi } from "vitest";
import { example } from "./readme-example.js";

const require = createRequire(import.meta.url);
const ENTRY = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);

// The example's ad-hoc server runs in the OS sandbox, as a user gets it: without bubblewrap it cannot.
const system = needs(["bwrap"]);

describe("README example", () => {
  it.skipIf(system.skip)(
    `runs as written against the installed server-everything${system.note}`,
    async () => {
      const ws = realpathSync(mkdtempSync(join(tmpdir(), "capgate-mcp-example-")));
      const log = vi.spyOn(console, "log").mockImplementation(() => {});
      try {
        const results = await example(ws, { command: process.execPath, args: [ENTRY, "stdio"] });
        expect(results.map((r) => r.success)).toEqual([true, true, true, false]);
        expect(results[1]!.summary).toBe("Echo: hi");
        expect(results[2]!.summary).toContain("5");
        expect(results[3]!.summary).toContain("browser_panel");
        expect(log).toHaveBeenCalledTimes(4);
      } finally {
        log.mockRestore();
        rmSync(ws, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
