import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dist = resolve(dirname(fileURLToPath(import.meta.url)), "..", "dist");

/** The packages a module loads by static imports alone, following its own relative imports. */
function staticImports(entry: string): string[] {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    // Static `import … from` / `export … from` / `import "…"` only: `import()` loads on use.
    for (const m of readFileSync(file, "utf8").matchAll(
      /^\s*(?:import|export)\s*(?:[^'"()]*?from\s*)?["']([^"']+)["']/gm,
    )) {
      const spec = m[1] as string;
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else bare.add(spec);
    }
  };
  visit(join(dist, entry));
  return [...bare].sort();
}

// A frontend pays for the harness, the loop, the MCP SDK and the database driver when it
// opens a host, serves /mcp or uses the queue — not for importing the package.
describe("importing @capgate/host starts nothing heavy", () => {
  it("dist/index.js reaches no harness, loop, MCP SDK, model SDK or database driver statically", () => {
    expect(statSync(join(dist, "index.js")).isFile()).toBe(true);
    const heavy = staticImports("index.js").filter((s) =>
      /^@capgate\/(harness|loop|mcp-client|models|postgres|capability-)|^@modelcontextprotocol\//.test(s),
    );
    expect(heavy).toEqual([]);
  });
});
