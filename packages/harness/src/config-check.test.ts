import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidConfigError, parseConfig } from "./config.js";
import { createHarness } from "./harness.js";

// Config load refuses what would certainly fail at first use, naming the property.

const root = mkdtempSync(join(tmpdir(), "capgate-config-check-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function problemsOf(fn: () => unknown): Array<{ property: string; message: string }> {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected the config to be rejected");
}

async function harnessProblems(config: Record<string, unknown>, stateDir = join(root, "state")) {
  try {
    const h = await createHarness({ config, workspace: root, stateDir, processEnv: {} });
    await h.close();
  } catch (error) {
    if (error instanceof InvalidConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected the config to be rejected");
}

describe("checked when the config is parsed", () => {
  it.each([
    ["http://127.0.0.1:3000", /is a URL: write a host or host:port .*drop "http:\/\/"/],
    ["https://example.com/api", /is a URL/],
    ["example.com/path", /is not a host/],
    ["user@host", /is not a host/],
  ])("web.allowHosts entry %s", (entry, message) => {
    const [p] = problemsOf(() => parseConfig({ web: { allowHosts: ["localhost:5173", entry] } }));
    expect(p?.property).toBe("web.allowHosts[1]");
    expect(p?.message).toMatch(message);
  });

  it("accepts hosts, host:port and IPv6 literals in allowHosts", () => {
    expect(() =>
      parseConfig({
        web: { allowHosts: ["localhost", "127.0.0.1:3000", "[::1]:8080", "::1", "db.internal"] },
      }),
    ).not.toThrow();
  });

  it("a model spec with an unknown provider or option", () => {
    expect(problemsOf(() => parseConfig({ model: "opnai:gpt-4o" }))[0]).toMatchObject({
      property: "model",
      message: expect.stringContaining('did you mean "openai"'),
    });
    expect(problemsOf(() => parseConfig({ model: "openai:gpt-4o?temprature=1" }))[0]?.property).toBe("model");
    expect(() => parseConfig({ model: "openai:gpt-4o-mini?temperature=0" })).not.toThrow();
  });
});

describe("checked when the harness is built", () => {
  it("a shell rule whose own examples disagree with it names the example", async () => {
    const problems = await harnessProblems({
      shell: {
        deny: [
          {
            prefix: ["git", "push"],
            mustMatch: ["git push origin main", "git pull"],
            mustNotMatch: ["git status"],
          },
        ],
        ask: [{ prefix: ["rm", "-rf"], mustNotMatch: ["rm -rf build"] }],
      },
    });
    expect(problems.map((p) => p.property)).toEqual([
      "shell.deny[0].mustMatch[1]",
      "shell.ask[0].mustNotMatch[0]",
    ]);
    expect(problems[0]?.message).toContain('"git pull" must match its prefix ["git","push"]');
  });

  it("rules whose examples hold are accepted", async () => {
    const h = await createHarness({
      config: {
        shell: { deny: [{ prefix: ["git", "push"], mustMatch: ["git push"], mustNotMatch: ["git pull"] }] },
      },
      workspace: root,
      stateDir: join(root, "state-ok"),
      processEnv: {},
    });
    await h.close();
  });

  it("a preload naming an unknown capability, with a did-you-mean; nothing is created", async () => {
    const stateDir = join(root, "never-created");
    const problems = await harnessProblems(
      {
        profiles: {
          Coder: { preload: ["fs", "shel"] },
          Reviewer: { promptDelta: "Review.", charBudget: 1000, preload: ["git", "mcp:nosuch"] },
        },
      },
      stateDir,
    );
    expect(problems.map((p) => p.property)).toEqual([
      "profiles.Coder.preload[1]",
      "profiles.Reviewer.preload[1]",
    ]);
    expect(problems[0]?.message).toContain('did you mean "shell"?');
    expect(() => readdirSync(stateDir)).toThrow();
  });

  it("mcp:<server> of a configured server is a known capability", async () => {
    const h = await createHarness({
      config: {
        mcpServers: { docs: { command: "node", args: ["-e", "0"], enabled: false } },
        profiles: { Researcher: { preload: ["web", "mcp:docs"] } },
      },
      workspace: root,
      stateDir: join(root, "state-mcp"),
      processEnv: {},
    });
    await h.close();
  });
});
