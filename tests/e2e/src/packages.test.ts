import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

// The packages as a user outside the monorepo meets them: `pnpm pack:all` tarballs, installed
// with plain npm into fresh temp projects (third-party dependencies come from the npm registry).
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const NPM_ENV = {
  ...process.env,
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
  npm_config_loglevel: "warn",
};
let packs = "";
/** `@capgate/<name>`, spelled so the graph check does not read the scripts below as this file's imports. */
const cg = (name: string) => `@capgate/${name}`;
const tarball = (name: string) => {
  const file = readdirSync(packs).find((f) => f.startsWith(`${name}-`) && /-\d+\.\d+\.\d+\.tgz$/.test(f));
  if (!file) throw new Error(`no tarball for ${name} in ${packs}`);
  return join(packs, file);
};

function project(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `capgate-npm-${name}-`));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: `try-${name}`, private: true, type: "module" }),
  );
  return dir;
}

function npm(args: string[], cwd: string): { stdout: string; stderr: string } {
  const r = spawnSync("npm", args, { cwd, env: NPM_ENV, encoding: "utf8", timeout: 540_000 });
  if (r.status !== 0) throw new Error(`npm ${args.join(" ")} exited ${r.status}:\n${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr };
}

function node(script: string, cwd: string): string {
  const file = join(cwd, "try.mjs");
  writeFileSync(file, script);
  return execFileSync(process.execPath, [file], { cwd, encoding: "utf8" });
}

beforeAll(() => {
  packs = mkdtempSync(join(tmpdir(), "capgate-packs-"));
  execFileSync(process.execPath, [join(ROOT, "scripts", "pack-all.mjs"), packs], { stdio: "pipe" });
});

describe("tarballs installed with plain npm", () => {
  it("pack:all packs the public packages only, each with its LICENSE and README", () => {
    const names = readdirSync(packs);
    expect(names).toContain(`capgate-${version("apps/cli")}.tgz`);
    expect(names.some((n) => n.includes("bench") || n.includes("e2e"))).toBe(false);
    // Every public workspace package, and nothing else.
    const publicPackages = ["packages", "packages/capabilities", "apps"].flatMap((group) =>
      readdirSync(join(ROOT, group), { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(ROOT, group, d.name, "package.json")))
        .filter((d) => !JSON.parse(readFileSync(join(ROOT, group, d.name, "package.json"), "utf8")).private),
    );
    expect(names).toHaveLength(publicPackages.length);
    const list = execFileSync("tar", ["-tzf", tarball("capgate-schema")], { encoding: "utf8" });
    expect(list).toContain("package/LICENSE");
    expect(list).toContain("package/README.md");
  });

  it("@capgate/schema alone (with the error base)", () => {
    const dir = project("schema");
    const { stderr } = npm(["install", tarball("capgate-schema"), tarball("capgate-errors")], dir);
    expect(stderr).not.toContain("EBADENGINE");
    const out = node(
      `import { parseToolAction } from "${cg("schema")}";
const r = parseToolAction('{"name":"capability_search","arguments":{"q":"x"}}');
console.log(r.ok ? "ok" : r.error.code + " " + r.error.property);`,
      dir,
    );
    expect(out.trim()).toBe("invalid_arguments arguments.q");
  });

  it("@capgate/registry alone (with schema and the error base)", () => {
    const dir = project("registry");
    npm(["install", tarball("capgate-registry"), tarball("capgate-schema"), tarball("capgate-errors")], dir);
    const out = node(
      `import { Registry } from "${cg("registry")}";
const r = new Registry();
r.register({ name: "notes", version: "1.0.0", description: "Keep and find short notes in a local notebook.", profileFit: ["Researcher"],
  tools: [{ name: "notes.find", description: "Find notes that mention some words.", risk: "read",
    inputSchema: { type: "object", additionalProperties: false, required: ["query"], properties: { query: { type: "string", minLength: 1, maxLength: 200, description: "Words to find." } } } }] });
console.log(r.search("find my notes")[0].capability);`,
      dir,
    );
    expect(out.trim()).toBe("notes");
  });

  it("@capgate/mcp-client alone (with schema), its ./stdio subpath included", () => {
    const dir = project("mcp-client");
    npm(
      [
        "install",
        tarball("capgate-mcp-client"),
        tarball("capgate-schema"),
        tarball("capgate-errors"),
        tarball("capgate-process-group"),
      ],
      dir,
    );
    const out = node(
      `import { parseMcpServersConfig } from "${cg("mcp-client")}";
import { createNodeMcpPool } from "${cg("mcp-client/stdio")}";
const servers = parseMcpServersConfig({ echo: { command: "node", args: ["server.js"] } });
console.log(Object.keys(servers).join(","), typeof createNodeMcpPool);`,
      dir,
    );
    expect(out.trim()).toBe("echo function");
  });

  it("@capgate/shell-policy alone: the grammar ships as its .wasm, and checkShellCommand works", () => {
    const list = execFileSync("tar", ["-tzf", tarball("capgate-shell-policy")], { encoding: "utf8" });
    expect(list).toContain("package/dist/tree-sitter-bash.wasm");
    expect(list).toContain("package/dist/tree-sitter-bash.LICENSE");
    expect(list).toContain("package/LICENSE");
    const dir = project("shell-policy");
    const { stderr } = npm(["install", tarball("capgate-shell-policy"), tarball("capgate-errors")], dir);
    expect(stderr).not.toMatch(/EBADENGINE|install script|allowScripts|ERESOLVE/i);
    // No other capgate package but the error base, and not tree-sitter-bash's sources and prebuilds.
    expect(readdirSync(join(dir, "node_modules", "@capgate")).sort()).toEqual(["errors", "shell-policy"]);
    expect(existsSync(join(dir, "node_modules", "tree-sitter-bash"))).toBe(false);
    expect(existsSync(join(dir, "node_modules", "web-tree-sitter"))).toBe(true);
    const out = node(
      `import { checkShellCommand, splitCommandLine } from "${cg("shell-policy")}";
const rules = { ask: [{ prefix: ["git", "push"] }] };
for (const c of ["npm test && git status --short", "true && nohup xdg-open https://example.com", "sudo git push"])
  { const d = await checkShellCommand(c, rules); console.log(d.decision, d.rule ?? "-"); }
console.log(JSON.stringify(await splitCommandLine("node server.js --port 3000")));`,
      dir,
    );
    expect(out.trim().split("\n")).toEqual([
      "allow -",
      "deny gui.xdg-open",
      "ask ask[0]",
      '{"ok":true,"argv":["node","server.js","--port","3000"]}',
    ]);
    // The Claude Code hook, through the package's ./claude-code entry.
    const hook = node(
      `import { decideHook } from "${cg("shell-policy")}/claude-code";
const call = { tool_name: "Bash", tool_input: { command: "true && xdg-open https://example.com" } };
console.log((await decideHook(call, { cwd: process.cwd() })).decision);`,
      dir,
    );
    expect(hook.trim()).toBe("deny");
  });

  it("a capability alone (with its peers tools and schema)", () => {
    const dir = project("capability");
    const { stderr } = npm(
      [
        "install",
        tarball("capgate-capability-memory"),
        tarball("capgate-tools"),
        tarball("capgate-schema"),
        tarball("capgate-errors"),
      ],
      dir,
    );
    expect(stderr).not.toMatch(/ERESOLVE|peer dep/i);
    const out = node(
      `import { capability } from "${cg("capability-memory")}";
console.log(capability.manifest.name, capability.manifest.tools.length > 0);`,
      dir,
    );
    expect(out.trim()).toBe("memory true");
    // The shell parser is not dragged in by a capability that runs no command lines.
    for (const heavy of ["tree-sitter-bash", "web-tree-sitter", "@capgate/shell-policy"])
      expect(existsSync(join(dir, "node_modules", heavy)), heavy).toBe(false);
    // Nor the Node-only guards and what they use: the contract runs no process and fetches nothing.
    for (const nodeOnly of ["execa", "signal-exit", "ipaddr.js", "@capgate/sandbox", "@capgate/net-guard"])
      expect(existsSync(join(dir, "node_modules", nodeOnly)), nodeOnly).toBe(false);
  });

  it("the CLI installed globally into a temp prefix runs `capgate demo`, and a third-party capability from a tarball plugs in through the config", () => {
    const prefix = mkdtempSync(join(tmpdir(), "capgate-prefix-"));
    const all = readdirSync(packs).map((f) => join(packs, f));
    npm(["install", "-g", "--prefix", prefix, ...all], tmpdir());
    const capgate = join(prefix, "bin", "capgate");
    expect(existsSync(capgate)).toBe(true);
    const home = mkdtempSync(join(tmpdir(), "capgate-home-"));
    const env = {
      ...process.env,
      CAPGATE_HOME: home,
      NO_COLOR: "1",
      PATH: `${join(prefix, "bin")}:${process.env.PATH}`,
    };
    const demo = spawnSync(capgate, ["demo"], { env, encoding: "utf8", timeout: 120_000 });
    expect(demo.status, demo.stderr).toBe(0);
    expect(demo.stdout).toContain("✓ finished");
    expect(demo.stdout).not.toContain("is not on your PATH");

    // A third-party capability, written against the public API, packed and installed with npm.
    const src = mkdtempSync(join(tmpdir(), "capgate-weather-"));
    mkdirSync(join(src, "dist"));
    writeFileSync(
      join(src, "package.json"),
      JSON.stringify({
        name: "capgate-capability-weather",
        version: "0.3.0",
        type: "module",
        exports: { ".": "./dist/index.js" },
        files: ["dist"],
        peerDependencies: { "@capgate/tools": ">=0.1.0 <1", "@capgate/schema": ">=0.1.0 <1" },
      }),
    );
    writeFileSync(
      join(src, "dist", "index.js"),
      `import { defineCapability } from "${cg("tools")}";
export const manifest = {
  name: "weather", version: "0.3.0", manifestFormat: 1,
  description: "Look up a made-up weather forecast for a city, offline.",
  profileFit: ["Researcher", "Orchestrator"],
  tools: [{ name: "weather.forecast", description: "Give the forecast for one city, by name.", risk: "read",
    inputSchema: { type: "object", additionalProperties: false, required: ["city"],
      properties: { city: { type: "string", minLength: 1, maxLength: 80, description: "The city's name." } } } }],
};
export const capability = defineCapability({
  manifest,
  handlers: { forecast: async (args) => ({ success: true, summary: "Sunny in " + args.city }) },
});
`,
    );
    const packed = npm(["pack", "--pack-destination", src], src).stdout.trim().split("\n").at(-1) ?? "";
    const user = project("weather-user");
    npm(
      [
        "install",
        join(src, packed),
        tarball("capgate-tools"),
        tarball("capgate-schema"),
        tarball("capgate-errors"),
      ],
      user,
    );
    writeFileSync(
      join(user, "capgate.config.json"),
      JSON.stringify({ capabilities: ["capgate-capability-weather"] }),
    );
    const list = spawnSync(capgate, ["capabilities"], { cwd: user, env, encoding: "utf8" });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^weather v0\.3\.0 .*capgate-capability-weather@0\.3\.0/m);
    const call = spawnSync(capgate, ["call", "weather.forecast", '{"city":"Lyon"}'], {
      cwd: user,
      env,
      encoding: "utf8",
    });
    expect(call.status, call.stderr).toBe(0);
    expect(call.stdout.trim()).toBe("Sunny in Lyon");
  });
});

function version(dir: string): string {
  return (JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as { version: string }).version;
}
