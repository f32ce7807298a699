import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate, validatorCacheStats } from "@capgate/schema";
import { describe, expect, it } from "vitest";
import { InvalidConfigError, loadConfig, parseConfig } from "./config.js";
import { configSchema } from "./config-schema.js";

function problems(value: unknown): Array<{ property: string; message: string }> {
  try {
    parseConfig(value);
  } catch (error) {
    if (error instanceof InvalidConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected the config to be rejected");
}

describe("the empty config (no file)", () => {
  it("is valid by the schema, which is therefore not compiled for it", () => {
    const before = validatorCacheStats().compiles;
    const resolved = parseConfig({});
    expect(validatorCacheStats().compiles).toBe(before);
    expect(resolved.mcpServers).toEqual({});
    expect(Object.keys(resolved.profiles).length).toBeGreaterThan(0);
    // What the skip stands in for: the schema accepts {}.
    expect(validate(configSchema, {})).toEqual({ ok: true });
  });

  it("is only the plain empty object: anything else is checked", () => {
    expect(problems({ nope: 1 })[0]?.property).toBe("nope");
    expect(() => parseConfig(Object.create({ approval: "sometimes" }))).toThrow();
  });
});

describe("config", () => {
  it("accepts a full, valid config (Claude Desktop-shaped mcpServers included)", () => {
    const resolved = parseConfig({
      model: "openai:gpt-4o-mini",
      approval: "on-risk",
      profiles: {
        Coder: { charBudget: 64000 },
        Reviewer: { promptDelta: "Review diffs.", charBudget: 20000, preload: ["git"] },
      },
      mcpServers: {
        github: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-github"],
          env: { GITHUB_TOKEN: "x" },
        },
        docs: { url: "https://example.com/mcp" },
        hosted: { url: "https://mcp.example.com/mcp", oauth: { scopes: ["read"] }, sampling: true },
        robot: {
          url: "https://api.example.com/mcp",
          oauth: { grant: "client_credentials", clientId: "ci", clientSecret: "s" },
        },
      },
      shell: { deny: [{ prefix: ["git", "push"], reason: "no pushing" }], ask: [{ prefix: ["rm", "-rf"] }] },
      web: { allowHosts: ["127.0.0.1:3000"] },
      limits: { timeoutMs: 60000, maxSteps: 30, workers: 2 },
    });
    expect(resolved.profiles.Coder?.charBudget).toBe(64000);
    expect(resolved.profiles.Reviewer?.preload).toEqual(["git"]);
    expect(Object.keys(resolved.mcpServers)).toEqual(["github", "docs", "hosted", "robot"]);
  });

  it("names the bad property for each kind of mistake", () => {
    expect(problems({ approval: "sometimes" })[0]?.property).toBe("approval");
    expect(problems({ modle: "openai:x" })[0]).toMatchObject({ property: "modle" });
    expect(problems({ modle: "openai:x" })[0]?.message).toContain("did you mean `model`?");
    expect(problems({ limits: { timeoutMs: 5 } })[0]?.property).toBe("limits.timeoutMs");
    expect(problems({ web: { allowHosts: "127.0.0.1" } })[0]?.property).toBe("web.allowHosts");
    expect(problems({ shell: { deny: [{ reason: "x" }] } })[0]?.property).toBe("shell.deny[0].prefix");
    expect(problems({ mcpServers: { gh: { command: 5 } } }).map((p) => p.property)).toContain(
      "mcpServers.gh.command",
    );
    expect(
      problems({ mcpServers: { s: { url: "https://x.dev/mcp", oauth: { grant: "password" } } } })[0]
        ?.property,
    ).toBe("mcpServers.s.oauth.grant");
    expect(
      problems({ mcpServers: { s: { url: "https://x.dev/mcp", oauth: { clientID: "a" } } } })[0]?.property,
    ).toBe("mcpServers.s.oauth.clientID");
    expect(problems({ profiles: { Coder: { charBudget: -1 } } })[0]?.property).toBe(
      "profiles.Coder.charBudget",
    );
  });

  it("loads capgate.config.json from a directory, or an explicit path, with JSON errors located", () => {
    const dir = mkdtempSync(join(tmpdir(), "capgate-config-"));
    expect(loadConfig({ cwd: dir }).path).toBeUndefined();
    writeFileSync(join(dir, "capgate.config.json"), '{ "model": "scripted:replies.json" }');
    expect(loadConfig({ cwd: dir })).toMatchObject({
      path: join(dir, "capgate.config.json"),
      config: { model: "scripted:replies.json" },
    });
    writeFileSync(join(dir, "bad.json"), '{\n  "model": "x",\n  "approval": never\n}');
    expect(() => loadConfig({ cwd: dir, path: "bad.json" })).toThrow(/not valid JSON at line 3/);
    expect(() => loadConfig({ cwd: dir, path: "missing.json" })).toThrow(/does not exist/);
  });

  it("publishes the schema it validates with", () => {
    const published = JSON.parse(
      readFileSync(new URL("../schemas/capgate.config.schema.json", import.meta.url), "utf8"),
    );
    expect(published).toEqual(JSON.parse(JSON.stringify(configSchema)));
  });

  it("checks mcpServers.<name>.tools and .approval, naming the bad property", () => {
    const resolved = parseConfig({
      mcpServers: {
        pw: {
          command: "npx",
          tools: { allow: ["browser_*"], deny: ["*_install"] },
          approval: { browser_navigate: "ask", "browser_snap*": "never" },
        },
      },
    });
    expect(resolved.mcpServers.pw).toMatchObject({
      tools: { allow: ["browser_*"], deny: ["*_install"] },
      approval: { browser_navigate: "ask", "browser_snap*": "never" },
    });
    const entry = (extra: Record<string, unknown>) => ({ mcpServers: { pw: { command: "npx", ...extra } } });
    expect(problems(entry({ tools: { deny: ["ok", "{a,b}"] } }))).toEqual([
      expect.objectContaining({
        property: "mcpServers.pw.tools.deny[1]",
        message: expect.stringContaining("list alternatives as separate entries"),
      }),
    ]);
    expect(problems(entry({ tools: { allow: "browser_*" } }))[0]?.property).toBe("mcpServers.pw.tools.allow");
    expect(problems(entry({ tools: { alow: [] } }))[0]?.property).toMatch(/^mcpServers\.pw\.tools/);
    expect(problems(entry({ tools: { deny: [""] } }))[0]?.property).toBe("mcpServers.pw.tools.deny[0]");
    expect(problems(entry({ approval: { echo: "always" } }))[0]?.property).toMatch(
      /^mcpServers\.pw\.approval/,
    );
  });
});
