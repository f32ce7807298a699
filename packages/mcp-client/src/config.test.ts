import { describe, expect, it } from "vitest";
import { enabledServerNames, parseMcpServersConfig } from "./config.js";
import { McpConfigError } from "./errors.js";
import { McpPool } from "./pool.js";

function problems(value: unknown): Array<{ property: string; message: string }> {
  try {
    parseMcpServersConfig(value);
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError);
    expect((error as McpConfigError).code).toBe("invalid_config");
    return (error as McpConfigError).problems;
  }
  throw new Error("expected the config to be rejected");
}

describe("parseMcpServersConfig", () => {
  it("accepts a Claude Desktop style config and keeps its order", () => {
    const config = parseMcpServersConfig({
      github: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_x" },
      },
      remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer t" }, timeoutMs: 5000 },
      off: { command: "x", enabled: false },
      typed: { type: "sse", url: "http://127.0.0.1:3001/sse" },
      local: { type: "stdio", command: "node", args: ["s.js"], cwd: "/tmp" },
    });
    expect(Object.keys(config)).toEqual(["github", "remote", "off", "typed", "local"]);
    expect(enabledServerNames(config)).toEqual(["github", "remote", "typed", "local"]);
    expect(config.remote).toEqual({
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer t" },
      timeoutMs: 5000,
    });
  });

  it("names the property of each problem", () => {
    expect(problems({ github: { command: 42 } })).toEqual([
      {
        property: "mcpServers.github.command",
        message: expect.stringContaining("mcpServers.github.command must be a non-empty string"),
      },
    ]);
    expect(problems({ s: { command: "x", args: ["ok", 3] } })[0]?.property).toBe("mcpServers.s.args[1]");
    expect(problems({ s: { command: "x", env: { TOKEN: 1 } } })[0]?.property).toBe("mcpServers.s.env.TOKEN");
    expect(problems({ s: { url: "ftp://x" } })[0]?.message).toContain("must be an http:// or https:// URL");
    expect(problems({ s: { url: "http://x", headers: { "bad header": "v" } } })[0]?.property).toBe(
      'mcpServers.s.headers["bad header"]',
    );
    expect(problems({ s: { command: "x", timeoutMs: 0 } })[0]?.property).toBe("mcpServers.s.timeoutMs");
    expect(problems({ s: { command: "x", enabled: "yes" } })[0]?.property).toBe("mcpServers.s.enabled");
    expect(problems({ s: { command: "x", type: "http" } })[0]?.property).toBe("mcpServers.s.type");
  });

  it("rejects unknown keys with a suggestion, and keys of the other transport", () => {
    expect(problems({ github: { comand: "npx" } })[0]).toEqual({
      property: "mcpServers.github.comand",
      message: expect.stringContaining('did you mean "command" instead of "comand"?'),
    });
    const unknown = problems({ github: { command: "npx", argz: [] } });
    expect(unknown[0]).toEqual({
      property: "mcpServers.github.argz",
      message: 'mcpServers.github.argz is not a known property; did you mean "args"?',
    });
    expect(problems({ s: { url: "http://x", env: {} } })[0]?.message).toContain("belongs to stdio servers");
  });

  it("rejects both or neither of command and url, bad names, and non-objects", () => {
    expect(problems({ s: { command: "x", url: "http://x" } })[0]?.message).toContain(
      'both "command" and "url"',
    );
    expect(problems({ s: {} })[0]?.message).toContain('needs "command"');
    expect(problems({ "bad/name": { command: "x" } })[0]?.property).toBe('mcpServers["bad/name"]');
    expect(problems({ ["x".repeat(65)]: { command: "x" } })[0]?.message).toContain("1–64 letters");
    expect(problems([])[0]?.message).toContain("got an array");
    expect(problems({ s: null })[0]?.property).toBe("mcpServers.s");
  });

  it("reports every problem at once, first one as the error's property", () => {
    try {
      parseMcpServersConfig({ a: { command: 1 }, b: { url: 2 } });
      expect.unreachable();
    } catch (error) {
      const e = error as McpConfigError;
      expect(e.problems.map((p) => p.property)).toEqual(["mcpServers.a.command", "mcpServers.b.url"]);
      expect(e.property).toBe("mcpServers.a.command");
      expect(e.message).toMatch(/^2 problems in mcpServers/);
    }
  });

  it("does not mutate or alias its input", () => {
    const input = { s: { command: "x", args: ["a"] } };
    const out = parseMcpServersConfig(input);
    (out.s as { args: string[] }).args.push("b");
    expect(input.s.args).toEqual(["a"]);
  });

  it("is what McpPool runs on its input", () => {
    expect(() => new McpPool({ s: { command: "x", argz: [] } as never })).toThrow(
      'mcpServers.s.argz is not a known property; did you mean "args"?',
    );
  });
});

describe("oauth and sampling in server entries", () => {
  const url = "https://mcp.example.com/mcp";
  it("accepts every documented oauth shape", () => {
    const config = parseMcpServersConfig({
      dcr: { url, oauth: {} },
      pre: {
        url,
        oauth: { clientId: "app", clientSecret: "s", scopes: ["read", "write"], redirectPort: 8765 },
      },
      m2m: { url, oauth: { grant: "client_credentials", clientId: "ci", clientSecret: "s" }, sampling: true },
      jwt: {
        url,
        oauth: { grant: "client_credentials", clientId: "ci", privateKey: "PEM", signingAlgorithm: "RS256" },
      },
      local: { command: "node", sampling: false },
    });
    expect(config.pre).toMatchObject({ oauth: { clientId: "app", redirectPort: 8765 } });
    expect(config.m2m).toMatchObject({ sampling: true });
  });

  it("names each bad oauth property, and never quotes a secret back", () => {
    const found = problems({
      a: { url, oauth: { grant: "password" } },
      b: { url, oauth: { clientSecret: "hunter2-secret" } },
      c: { url, oauth: { scopes: ["two words"] } },
      d: { url, oauth: { redirectPort: 70000 } },
      e: { url, oauth: { grant: "client_credentials", clientId: "x" } },
      f: { url, oauth: { clientMetadataUrl: "http://insecure.example/doc" } },
      g: { url, oauth: { scope: ["x"] } },
      h: { url, oauth: {}, headers: { Authorization: "Bearer x" } },
      i: { command: "x", oauth: {} },
      j: { url, sampling: "yes" },
    });
    const byProperty = Object.fromEntries(found.map((p) => [p.property, p.message]));
    expect(Object.keys(byProperty).sort()).toEqual(
      [
        "mcpServers.a.oauth.grant",
        "mcpServers.b.oauth.clientSecret",
        "mcpServers.c.oauth.scopes[0]",
        "mcpServers.d.oauth.redirectPort",
        "mcpServers.e.oauth.clientSecret",
        "mcpServers.f.oauth.clientMetadataUrl",
        "mcpServers.g.oauth.scope",
        "mcpServers.h.headers.Authorization",
        "mcpServers.i.oauth",
        "mcpServers.j.sampling",
      ].sort(),
    );
    expect(byProperty["mcpServers.g.oauth.scope"]).toContain('did you mean "scopes"?');
    expect(JSON.stringify(found)).not.toContain("hunter2-secret");
  });
});
