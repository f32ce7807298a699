import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { deferCapability, defineCapability, isDeferred } from "@capgate/tools";
import { afterAll, describe, expect, it } from "vitest";
import { builtinCapabilities } from "./builtins.js";
import { createHarness, type Harness } from "./harness.js";

const open: Harness[] = [];
afterAll(async () => {
  await Promise.all(open.map((h) => h.close()));
});

async function harness(
  options: Parameters<typeof createHarness>[0] = {},
): Promise<{ h: Harness; workspace: string }> {
  const root = mkdtempSync(join(tmpdir(), "capgate-builtins-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const h = await createHarness({ workspace, stateDir: join(root, "state"), ...options });
  open.push(h);
  return { h, workspace };
}

/** What a caller sees of a call: its result, or the rejection's code, property and message. */
async function outcome(call: Promise<{ result: unknown }>): Promise<unknown> {
  try {
    return { result: (await call).result };
  } catch (error) {
    const e = error as Error & { code?: string; property?: string };
    return { code: e.code, property: e.property, message: e.message };
  }
}

const notes = {
  name: "notes",
  version: "1.0.0",
  manifestFormat: 1,
  description: "Keep short notes for the session: add one and count them. Notes are not saved to disk.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "notes.add",
      description:
        "Add a note to the session's notes. Use memory.remember for notes that outlive the session.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { text: { type: "string", minLength: 1, maxLength: 200, description: "The note." } },
        required: ["text"],
      },
    },
  ],
} as const;

const notesCapability = defineCapability({
  manifest: notes,
  handlers: { add: async (args) => ({ success: true, summary: `noted: ${args.text}` }) },
});

describe("built-in capabilities", () => {
  it("are registered from their manifests, their handlers imported on first use", () => {
    expect(builtinCapabilities().map((c) => [c.manifest.name, isDeferred(c)])).toEqual(
      ["fs", "shell", "git", "web", "browser_panel", "cua", "mcp", "workers", "memory", "code", "script"].map(
        (name) => [name, true],
      ),
    );
  });

  // A handler module imported by a package of another version, or a ./manifest that drifted
  // from the package root, would be refused at the first call; this finds it before.
  it("each import handlers defined for exactly the manifest they are registered with", async () => {
    for (const c of builtinCapabilities()) {
      const loaded = await c.load();
      expect([c.manifest.name, [...loaded.handlers.keys()]]).toEqual([
        c.manifest.name,
        c.manifest.tools.map((t) => t.name),
      ]);
    }
  });

  // The built bundle: what `import "@capgate/harness"` loads before anything is called.
  it("the built harness imports no capability's handlers, no shell parser and no schema compiler", () => {
    const dist = resolve(dirname(fileURLToPath(import.meta.url)), "..", "dist");
    const text = readFileSync(join(dist, "index.js"), "utf8");
    const statics = [...text.matchAll(/^\s*(?:import|export)\s*(?:[^'"()]*?from\s*)?["']([^"']+)["']/gm)].map(
      (m) => m[1] as string,
    );
    expect(statics.filter((s) => s.startsWith("@capgate/capability-")).sort()).toEqual(
      ["browser-panel", "code", "cua", "fs", "git", "mcp", "memory", "script", "shell", "web", "workers"].map(
        (name) => `@capgate/capability-${name}/manifest`,
      ),
    );
    expect(statics.filter((s) => /^(ajv|ajv-formats|@capgate\/shell-policy)(\/|$)/.test(s))).toEqual([]);
  });
});

describe("a deferred capability in a harness", () => {
  it("is searched, listed and refused without importing its handlers, and imported by its first valid call", async () => {
    const loads: string[] = [];
    const deferred = deferCapability(notes, async () => {
      loads.push("notes");
      return notesCapability;
    });
    const { h } = await harness({ capabilities: [deferred] });
    const eager = await harness({ capabilities: [notesCapability] });
    expect(h.registry.search("add a note", { limit: 1 })[0]?.capability).toBe("notes");
    expect(h.capabilities.get("notes")?.manifest).toEqual(eager.h.capabilities.get("notes")?.manifest);
    const refused: Array<[string, Record<string, unknown>]> = [
      ["notes.ad", { text: "x" }],
      ["notes.add", {}],
      ["notes.add", { text: "" }],
      ["notes.add", { txt: "x" }],
    ];
    for (const [tool, args] of refused) {
      const answer = await outcome(h.callTool(tool, args));
      expect({ tool, args, answer }).toEqual({
        tool,
        args,
        answer: await outcome(eager.h.callTool(tool, args)),
      });
      expect(answer).toMatchObject({ code: expect.stringMatching(/^(unknown_tool|invalid_arguments)$/) });
    }
    expect(loads).toEqual([]);
    expect(await outcome(h.callTool("notes.add", { text: "one" }))).toEqual({
      result: { success: true, summary: "noted: one" },
    });
    expect(await outcome(h.callTool("notes.add", { text: "two" }))).toEqual({
      result: { success: true, summary: "noted: two" },
    });
    expect(loads).toEqual(["notes"]);
  });
});

describe("fs.read, its handlers imported by the first call", () => {
  // The answers a harness gave when every built-in was imported and compiled at start.
  it("refuses bad arguments and escapes as before, and reads", async () => {
    const { h, workspace } = await harness();
    writeFileSync(join(workspace, "hello.txt"), "hello\n");
    const signature = "Signature: fs.read(path: string, offset?: integer, limit?: integer).";
    const invalid = (property: string, text: string) => ({
      code: "invalid_arguments",
      property,
      message: `Invalid arguments for fs.read: ${text} ${signature}`,
    });
    expect(await outcome(h.callTool("fs.read", { path: "hello.txt", x: 1 }))).toEqual(
      invalid("x", "`x` unexpected property `x` Allowed: path, offset, limit."),
    );
    expect(await outcome(h.callTool("fs.read", { path: "" }))).toEqual(
      invalid("path", "`path` must NOT have fewer than 1 characters."),
    );
    expect(await outcome(h.callTool("fs.read", {}))).toEqual(
      invalid("path", "`path` missing required property `path`."),
    );
    expect(await outcome(h.callTool("fs.read", { path: 3, limit: 0 }))).toEqual(
      invalid("path", "`path` must be string, got integer. Also: `limit` must be >= 1."),
    );
    expect(await outcome(h.callTool("fs.read", { path: "../outside.txt" }))).toEqual({
      code: "policy_denied",
      property: "path",
      message: `path "../outside.txt" climbs out of the workspace with '..'; only paths inside the workspace are allowed.`,
    });
    expect(await outcome(h.callTool("fs.read", { path: "hello.txt" }))).toEqual({
      result: { success: true, summary: "hello.txt — lines 1–1 of 1\nhello", data: expect.anything() },
    });
  });
});
