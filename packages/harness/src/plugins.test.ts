import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";
import { createHarness, type Harness } from "./harness.js";
import { withCapabilityPlugins } from "./plugins.js";

// The plugin modules import the built @capgate/tools by file URL: they live in a temp
// project, outside this workspace's node_modules.
const TOOLS = new URL("../../tools/dist/index.js", import.meta.url).href;

const manifest = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  version: "1.2.0",
  manifestFormat: 1,
  description: `Greets people by name and says hello to them (${name}).`,
  profileFit: ["Orchestrator", "Coder"],
  tools: [
    {
      name: `${name}.hello`,
      description: "Say hello to one person, by their name.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        required: ["who"],
        properties: { who: { type: "string", minLength: 1, maxLength: 100, description: "Who to greet." } },
      },
    },
  ],
  ...extra,
});

const module = (m: unknown) =>
  `import { defineCapability } from ${JSON.stringify(TOOLS)};
export const manifest = ${JSON.stringify(m)};
export const capability = defineCapability({
  manifest,
  handlers: { hello: async (args) => ({ success: true, summary: "hello " + args.who }) },
});
`;

function project(): string {
  const root = mkdtempSync(join(tmpdir(), "capgate-plugins-"));
  mkdirSync(join(root, "ws"));
  // A package installed in node_modules (exports "." → import).
  const pkg = join(root, "node_modules", "capgate-capability-greet");
  mkdirSync(join(pkg, "dist"), { recursive: true });
  writeFileSync(
    join(pkg, "package.json"),
    JSON.stringify({
      name: "capgate-capability-greet",
      version: "1.2.0",
      type: "module",
      exports: { ".": { import: "./dist/index.js" } },
    }),
  );
  writeFileSync(join(pkg, "dist", "index.js"), module(manifest("greet")));
  // A local module by path.
  mkdirSync(join(root, "caps"));
  writeFileSync(join(root, "caps", "wave.mjs"), module(manifest("wave")));
  // Broken ones: a manifest that fails the contract, a clash, a missing package, not a capability.
  writeFileSync(
    join(root, "caps", "bad.mjs"),
    module(manifest("bad", { tools: [{ ...manifest("bad").tools[0], description: "" }] })),
  );
  writeFileSync(join(root, "caps", "clash.mjs"), module(manifest("fs")));
  writeFileSync(join(root, "caps", "nothing.mjs"), "export const x = 1;\n");
  // `who` without maxLength: the contract wants every string bounded.
  const loose: unknown = JSON.parse(JSON.stringify(manifest("loose")).replace(',"maxLength":100', ""));
  writeFileSync(join(root, "caps", "loose.mjs"), module(loose));
  return root;
}

const open: Harness[] = [];
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

describe("capability plugins from the config", () => {
  it("loads packages and paths relative to the config file; reports broken ones by name and keeps the rest", async () => {
    const root = project();
    writeFileSync(
      join(root, "capgate.config.json"),
      JSON.stringify({
        capabilities: [
          "capgate-capability-greet",
          "./caps/wave.mjs",
          "./caps/bad.mjs",
          "./caps/clash.mjs",
          "./caps/nothing.mjs",
          "capgate-capability-missing",
          "./caps/loose.mjs",
        ],
      }),
    );
    // Loaded from another cwd: paths resolve against the config file's directory.
    const config = loadConfig({ path: join(root, "capgate.config.json"), cwd: tmpdir() });
    const h = await createHarness({ config, workspace: join(root, "ws"), stateDir: join(root, "state") });
    open.push(h);
    expect(h.registry.get("greet")?.version).toBe("1.2.0");
    expect(h.registry.get("wave")).toBeDefined();
    expect(h.capabilitySources.get("greet")).toMatchObject({
      kind: "plugin",
      spec: "capgate-capability-greet",
      package: "capgate-capability-greet@1.2.0",
    });
    expect(h.capabilitySources.get("wave")).toMatchObject({
      kind: "plugin",
      file: join(root, "caps", "wave.mjs"),
    });
    expect(h.capabilitySources.get("fs")).toEqual({ kind: "builtin" });
    const problems = Object.fromEntries(
      h.capabilityProblems.filter((p) => p.severity === "error").map((p) => [p.spec, p.message]),
    );
    expect(Object.keys(problems).sort()).toEqual([
      "./caps/bad.mjs",
      "./caps/clash.mjs",
      "./caps/nothing.mjs",
      "capgate-capability-missing",
    ]);
    expect(problems["./caps/bad.mjs"]).toContain("tools[0].description");
    // A contract finding is a warning on a plugin that loads: an unbounded string here.
    expect(h.capabilityProblems.filter((p) => p.severity === "warning").map((p) => p.spec)).toEqual([
      "./caps/loose.mjs",
    ]);
    expect(h.registry.get("loose")).toBeDefined();
    expect(problems["./caps/clash.mjs"]).toContain("'fs' is already registered");
    expect(problems["./caps/nothing.mjs"]).toContain("does not export a capability");
    expect(problems["capgate-capability-missing"]).toContain("is not installed");
    expect(h.registry.get("bad")).toBeUndefined();
    // A plugin's tool is called through the same executor as the built-ins.
    const outcome = await h.callTool("greet.hello", { who: "Ada" });
    expect(outcome.result).toMatchObject({ success: true, summary: "hello Ada" });
    await expect(h.callTool("greet.hello", { whom: "Ada" })).rejects.toMatchObject({
      code: "invalid_arguments",
    });
  });

  it("takes more plugins from the host (the CLI's --capability), resolved against their base dir", async () => {
    const root = project();
    const h = await createHarness({
      workspace: join(root, "ws"),
      stateDir: join(root, "state"),
      capabilityPlugins: ["./caps/wave.mjs", "capgate-capability-greet"],
      pluginBaseDir: root,
    });
    open.push(h);
    expect(h.capabilityProblems).toEqual([]);
    expect(h.registry.list().map((m) => m.name)).toEqual(expect.arrayContaining(["wave", "greet"]));
  });

  it("withCapabilityPlugins adds them to a config to hand on, fixed to what they name from their base dir", async () => {
    const root = project();
    // A config elsewhere: its own entries stay relative to its directory, the added ones are fixed from `root`.
    const other = mkdtempSync(join(tmpdir(), "capgate-plugins-config-"));
    writeFileSync(join(other, "capgate.config.json"), JSON.stringify({ capabilities: ["./own.mjs"] }));
    const config = withCapabilityPlugins(
      loadConfig({ cwd: other }),
      ["./caps/wave.mjs", "capgate-capability-greet", "not-installed-anywhere"],
      root,
    );
    expect(config.config.capabilities).toEqual([
      "./own.mjs",
      join(root, "caps", "wave.mjs"),
      join(root, "node_modules", "capgate-capability-greet"),
      // Not looked for again from the config's directory.
      join(root, "node_modules", "not-installed-anywhere"),
    ]);
    const h = await createHarness({
      config: withCapabilityPlugins(
        loadConfig({ cwd: other }),
        ["./caps/wave.mjs", "capgate-capability-greet"],
        root,
      ),
      workspace: join(root, "ws"),
      stateDir: join(root, "state"),
    });
    open.push(h);
    expect(h.registry.list().map((m) => m.name)).toEqual(expect.arrayContaining(["wave", "greet"]));
    expect(h.capabilityProblems.map((p) => p.spec)).toEqual(["./own.mjs"]);
    expect(withCapabilityPlugins(config, [])).toBe(config);
  });

  it("the config schema checks the list", () => {
    const root = project();
    writeFileSync(join(root, "capgate.config.json"), JSON.stringify({ capabilities: ["a", "a", ""] }));
    expect(() => loadConfig({ path: join(root, "capgate.config.json") })).toThrow(/capabilities/);
  });
});
