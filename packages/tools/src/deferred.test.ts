import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CapabilitySet } from "./capability-set.js";
import { deferCapability, isDeferred } from "./deferred.js";
import { type Capability, defineCapability } from "./define.js";
import { PolicyDeniedError } from "./errors.js";
import { type ExecuteContext, executeTool } from "./execute.js";
import { createToolContext } from "./tool-context.js";
import type { ApprovalHook, PolicyConfig } from "./types.js";

const manifest = {
  name: "notes",
  version: "1.0.0",
  description: "Notes kept in memory, for the deferred-capability tests.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "notes.add",
      description: "Add a note.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          text: { type: "string", minLength: 1 },
          tags: { type: "array", items: { type: "string" } },
        },
        required: ["text"],
      },
    },
    {
      name: "notes.count",
      description: "Count the notes.",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
  ],
} as const;

const other = {
  name: "other",
  version: "1.0.0",
  description: "Another capability in the same set.",
  profileFit: [],
  tools: [
    {
      name: "other.ping",
      description: "Answer pong.",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
  ],
} as const;

/** The notes capability, recording what ran in `trace`. */
function notesCapability(trace: string[]): Capability {
  return defineCapability({
    manifest,
    handlers: {
      add: async (args) => {
        trace.push("handler");
        return { success: true, summary: `added ${args.text}` };
      },
      count: async () => {
        trace.push("handler");
        return { success: true, summary: "0" };
      },
    },
    policies: {
      add: (args) => {
        trace.push("policy");
        if (args.text.startsWith("secret"))
          throw new PolicyDeniedError("secrets are not written to notes", { property: "text" });
        return undefined;
      },
    },
  });
}

const otherCapability = defineCapability({
  manifest: other,
  handlers: { ping: async () => ({ success: true, summary: "pong" }) },
});

/** A deferred notes capability whose loader records each call in `trace` as "load". */
function deferredNotes(trace: string[]) {
  return deferCapability(manifest, async () => {
    trace.push("load");
    return notesCapability(trace);
  });
}

function context(
  capabilities: CapabilitySet,
  trace: string[],
  options: { approval?: PolicyConfig["approval"]; approve?: boolean; loaded?: string[] } = {},
): ExecuteContext {
  const workspace = mkdtempSync(join(tmpdir(), "capgate-deferred-"));
  const approve: ApprovalHook = async () => {
    trace.push("approve");
    return options.approve ?? true;
  };
  const loaded = options.loaded ?? ["notes", "other"];
  return {
    ...createToolContext({ workspace, policy: { approval: options.approval ?? "never" }, approve }),
    capabilities,
    loaded: { isToolLoaded: (tool) => loaded.includes(tool.split(".")[0] as string) },
  };
}

/** What a caller sees of a call: its result, or the rejection's class, code, property and message. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return { result: await call };
  } catch (error) {
    const e = error as Error & { code?: string; property?: string };
    return { thrown: e.constructor.name, code: e.code, property: e.property, message: e.message };
  }
}

describe("deferCapability", () => {
  it("holds the manifest as defineCapability would, and loads nothing when made or added", () => {
    const trace: string[] = [];
    const deferred = deferredNotes(trace);
    expect(isDeferred(deferred)).toBe(true);
    expect(isDeferred(notesCapability([]))).toBe(false);
    expect(deferred.manifest).toEqual(notesCapability([]).manifest);
    const set = new CapabilitySet([deferred, otherCapability]);
    expect(set.lookup("notes.add")?.capability).toBe(deferred);
    expect(set.toolNames()).toEqual(["notes.add", "notes.count", "other.ping"]);
    expect(trace).toEqual([]);
  });

  it("is not loaded by a call that is refused before its policy, nor by another capability's call", async () => {
    const trace: string[] = [];
    const set = new CapabilitySet([deferredNotes(trace), otherCapability]);
    const ctx = context(set, trace, { loaded: ["other"] });
    await outcome(executeTool("notes.ad", { text: "x" }, ctx));
    await outcome(executeTool("notes.add", { text: "x" }, ctx));
    const loaded = context(set, trace);
    await outcome(executeTool("notes.add", { text: "" }, loaded));
    await outcome(executeTool("notes.add", { txt: "x" }, loaded));
    await outcome(executeTool("notes.add", [], loaded));
    expect(await executeTool("other.ping", {}, loaded)).toEqual({ success: true, summary: "pong" });
    expect(trace).toEqual([]);
  });

  it("refuses every call exactly as the defined capability does", async () => {
    const calls: Array<[string, unknown, Parameters<typeof context>[2]]> = [
      ["notes.ad", { text: "x" }, {}],
      ["notes.add", { text: "x" }, { loaded: ["other"] }],
      ["notes.add", undefined, {}],
      ["notes.add", "text", {}],
      ["notes.add", { text: "" }, {}],
      ["notes.add", { txt: "x" }, {}],
      ["notes.add", { text: "x", tags: [1] }, {}],
      ["notes.add", { text: "secret plan" }, {}],
      ["notes.add", { text: "x" }, { approval: "on-risk", approve: false }],
      ["notes.add", { text: "x" }, { approval: "always" }],
      ["notes.count", {}, { approval: "on-risk" }],
    ];
    for (const [tool, args, options] of calls) {
      const eagerTrace: string[] = [];
      const eager = await outcome(
        executeTool(
          tool,
          args,
          context(new CapabilitySet([notesCapability(eagerTrace)]), eagerTrace, options),
        ),
      );
      const deferredTrace: string[] = [];
      const deferred = await outcome(
        executeTool(
          tool,
          args,
          context(new CapabilitySet([deferredNotes(deferredTrace)]), deferredTrace, options),
        ),
      );
      // The same answer, the same checks in the same order, the import before the first of them that needs code.
      expect({ tool, args, deferred }).toEqual({ tool, args, deferred: eager });
      expect(deferredTrace.filter((step) => step !== "load")).toEqual(eagerTrace);
      expect(deferredTrace.indexOf("load")).toBe(eagerTrace.length === 0 ? -1 : 0);
    }
  });

  it("imports the handlers once, on the first valid call, before the policy, the approval and the handler", async () => {
    const trace: string[] = [];
    const set = new CapabilitySet([deferredNotes(trace)]);
    const ctx = context(set, trace, { approval: "on-risk" });
    const [first, second] = await Promise.all([
      executeTool("notes.add", { text: "a" }, ctx),
      executeTool("notes.add", { text: "b" }, ctx),
    ]);
    expect([first, second]).toEqual([
      { success: true, summary: "added a" },
      { success: true, summary: "added b" },
    ]);
    expect(await executeTool("notes.count", {}, ctx)).toEqual({ success: true, summary: "0" });
    // One import for the two calls that waited on it together, and none for the later call.
    expect(trace[0]).toBe("load");
    expect(trace.slice(1).sort()).toEqual([
      "approve",
      "approve",
      "handler",
      "handler",
      "handler",
      "policy",
      "policy",
    ]);
  });

  it("reports a failed import as a failure of the call, and tries again on the next call", async () => {
    const trace: string[] = [];
    let attempts = 0;
    const deferred = deferCapability(manifest, async () => {
      attempts++;
      if (attempts === 1) throw new Error("Cannot find module 'notes-handlers'");
      return notesCapability(trace);
    });
    const ctx = context(new CapabilitySet([deferred]), trace);
    expect(await executeTool("notes.add", { text: "a" }, ctx)).toEqual({
      success: false,
      summary:
        "notes.add failed: capability 'notes' could not be loaded: Cannot find module 'notes-handlers'",
    });
    expect(trace).toEqual([]);
    expect(await executeTool("notes.add", { text: "a" }, ctx)).toEqual({ success: true, summary: "added a" });
    expect(attempts).toBe(2);
  });

  it("refuses handlers defined for another manifest or anything that is not a capability", async () => {
    const changed = {
      ...manifest,
      tools: [manifest.tools[0], { ...manifest.tools[1], risk: "exec" }],
    } as const;
    const mismatched = deferCapability(changed, async () => notesCapability([]));
    const notOne = deferCapability(manifest, async () => ({ manifest }) as unknown as Capability);
    const ran: string[] = [];
    for (const deferred of [mismatched, notOne]) {
      const result = await executeTool("notes.count", {}, context(new CapabilitySet([deferred]), ran));
      expect(result.success).toBe(false);
      expect(result.summary).toMatch(
        /^notes\.count failed: capability 'notes' could not be loaded: capability 'notes': /,
      );
    }
    expect(ran).toEqual([]);
  });
});
