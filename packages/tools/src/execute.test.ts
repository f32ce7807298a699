import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { describe, expect, expectTypeOf, it } from "vitest";
import { CapabilitySet } from "./capability-set.js";
import { defineCapability } from "./define.js";
import { isRejection, isUnknownToolError, PolicyDeniedError } from "./errors.js";
import { executeTool } from "./execute.js";
import { LazyAbortController } from "./lazy-abort.js";
import { createToolContext } from "./tool-context.js";

const manifest = {
  name: "demo",
  version: "1.0.0",
  description: "Demo capability for executor tests.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "demo.echo",
      description: "Echo text back.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          text: { type: "string" },
          times: { type: "integer", minimum: 1 },
          mode: { enum: ["a", "b"] },
        },
        required: ["text"],
      },
    },
    {
      name: "demo.slow",
      description: "Sleep until aborted.",
      risk: "exec",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
    {
      name: "demo.guarded",
      description: "Refuses some input by policy.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: { type: "string" } },
        required: ["path"],
      },
    },
  ],
} as const;

let ran = 0;
const capability = defineCapability({
  manifest,
  handlers: {
    echo: async (args) => {
      expectTypeOf(args.text).toEqualTypeOf<string>();
      expectTypeOf(args.times).toEqualTypeOf<number | undefined>();
      expectTypeOf(args.mode).toEqualTypeOf<"a" | "b" | undefined>();
      return { success: true, summary: args.text.repeat(args.times ?? 1) };
    },
    slow: (_args, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener("abort", () => resolve({ success: false, summary: "stopped" }));
      }),
    guarded: async (args) => {
      ran++;
      return { success: true, summary: `wrote ${args.path}` };
    },
  },
  policies: {
    guarded: (args) => {
      if (args.path.startsWith("/"))
        throw new PolicyDeniedError("absolute paths are outside the workspace", { property: "path" });
      if (args.path.endsWith(".ask")) return { ask: `write ${args.path}` };
    },
  },
});

function ctx(overrides: Record<string, unknown> = {}, loaded = true) {
  const workspace = mkdtempSync(join(tmpdir(), "capgate-exec-"));
  return {
    ...createToolContext({ workspace }),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: (t: string) => loaded && t.startsWith("demo.") },
    ...overrides,
  };
}

describe("defineCapability", () => {
  it("rejects a missing or extra handler at definition time", () => {
    expect(() =>
      // @ts-expect-error — a handler is missing
      defineCapability({ manifest, handlers: { echo: async () => ({ success: true, summary: "" }) } }),
    ).toThrow(/no handler for tool 'demo.slow'/);
    expect(() =>
      defineCapability({
        manifest,
        handlers: {
          echo: async () => ({ success: true, summary: "" }),
          slow: async () => ({ success: true, summary: "" }),
          guarded: async () => ({ success: true, summary: "" }),
          // @ts-expect-error — not a tool of the manifest
          extra: async () => ({ success: true, summary: "" }),
        },
      }),
    ).toThrow(/handler 'extra' has no tool/);
  });
});

describe("executeTool", () => {
  it("dispatches a loaded tool with valid arguments", async () => {
    expect(await executeTool("demo.echo", { text: "ab", times: 2 }, ctx())).toEqual({
      success: true,
      summary: "abab",
    });
  });

  it("unknown tool → unknown_tool with a suggestion", async () => {
    const e = await executeTool("demo.ecko", {}, ctx()).catch((x) => x);
    expect(isUnknownToolError(e)).toBe(true);
    expect(e.message).toContain("demo.echo");
  });

  it("not loaded → unknown_tool naming the capability and capability_load", async () => {
    const e = await executeTool("demo.echo", { text: "x" }, ctx({}, false)).catch((x) => x);
    expect(isUnknownToolError(e)).toBe(true);
    expect(e.message).toContain(`capability 'demo' is not loaded; call capability_load {"name":"demo"}`);
  });

  it("invalid arguments name the property and give the signature", async () => {
    const e = await executeTool("demo.echo", { txt: "x" }, ctx()).catch((x) => x);
    expect(CapgateError.isInstance(e) && e.code).toBe("invalid_arguments");
    expect(e.property).toBe("txt");
    expect(e.message).toContain("did you mean `text`?");
    expect(e.message).toContain("demo.echo(text: string, times?: integer, mode?: enum)");
    const t = await executeTool("demo.echo", { text: 5 }, ctx()).catch((x) => x);
    expect(t.property).toBe("text");
  });

  it("policy refusal throws before the handler runs", async () => {
    ran = 0;
    const e = await executeTool("demo.guarded", { path: "/etc/passwd" }, ctx()).catch((x) => x);
    expect(isRejection(e)).toBe(true);
    expect(e.code).toBe("policy_denied");
    expect(ran).toBe(0);
  });

  it("approval: on-risk asks for write tools, denial is a rejection, approval runs it", async () => {
    ran = 0;
    const asked: string[] = [];
    const deny = ctx({
      policy: { approval: "on-risk" },
      approve: async (r: { tool: string }) => {
        asked.push(r.tool);
        return false;
      },
    });
    await expect(executeTool("demo.guarded", { path: "a" }, deny)).rejects.toThrow(/denied/);
    expect(ran).toBe(0);
    expect(await executeTool("demo.echo", { text: "read" }, deny)).toMatchObject({ success: true });
    expect(asked).toEqual(["demo.guarded"]);
    const allow = ctx({ policy: { approval: "on-risk" }, approve: async () => true });
    expect(await executeTool("demo.guarded", { path: "a" }, allow)).toMatchObject({ success: true });
    expect(ran).toBe(1);
  });

  it("approval required with no hook is denied with a clear message", async () => {
    await expect(
      executeTool("demo.echo", { text: "x" }, ctx({ policy: { approval: "always" } })),
    ).rejects.toThrow(/no one can approve here/);
  });

  it("a policy 'ask' verdict asks even in mode never", async () => {
    const asked: string[] = [];
    const c = ctx({
      approve: async (r: { description: string }) => {
        asked.push(r.description);
        return true;
      },
    });
    expect((await executeTool("demo.guarded", { path: "x.ask" }, c)).success).toBe(true);
    expect(asked).toEqual(["write x.ask"]);
  });

  it("times out a handler and aborts its signal", async () => {
    const c = ctx();
    c.limits = { ...c.limits, timeoutMs: 50 };
    const r = await executeTool("demo.slow", {}, c);
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/timed out after 50 ms/);
  });

  it("stops a handler's timeout while it waits on a person (pauseTimeout), and runs it again after", async () => {
    // The handler waits four timeouts long while paused (an approval a nested call asked for),
    // then for longer than the timeout with the clock running again: only the second wait times out.
    const waits = defineCapability({
      manifest: {
        name: "waits",
        version: "1.0.0",
        description: "Waits while paused.",
        profileFit: ["Coder"],
        tools: [
          {
            name: "waits.paused",
            description: "Waits with its clock paused.",
            inputSchema: {
              type: "object",
              additionalProperties: false,
              properties: { after: { type: "boolean" } },
            },
          },
        ],
      } as const,
      handlers: {
        paused: async (args, c) => {
          const resume = c.pauseTimeout?.() ?? (() => undefined);
          await new Promise((r) => setTimeout(r, 200));
          resume();
          if (args.after) await new Promise((r) => setTimeout(r, 200));
          return { success: true, summary: "waited" };
        },
      },
    });
    const c = {
      ...ctx(),
      capabilities: new CapabilitySet([waits]),
      loaded: { isToolLoaded: () => true },
    };
    c.limits = { ...c.limits, timeoutMs: 50 };
    expect(await executeTool("waits.paused", {}, c)).toEqual({ success: true, summary: "waited" });
    expect((await executeTool("waits.paused", { after: true }, c)).summary).toMatch(/timed out after 50 ms/);
  });

  it("asks nobody for a call that was stopped while its policy ran", async () => {
    const stop = new LazyAbortController();
    const asked: string[] = [];
    const stopping = defineCapability({
      manifest: {
        name: "stopping",
        version: "1.0.0",
        description: "Stopped during its policy.",
        profileFit: ["Coder"],
        tools: [
          {
            name: "stopping.write",
            description: "A write stopped while checked.",
            risk: "write",
            inputSchema: { type: "object", additionalProperties: false, properties: {} },
          },
        ],
      } as const,
      handlers: { write: async () => ({ success: true, summary: "wrote" }) },
      policies: {
        write: () => {
          stop.abort(new Error("the script has ended"));
          return undefined;
        },
      },
    });
    const c = {
      ...ctx({
        abort: stop,
        approve: async (r: { tool: string }) => {
          asked.push(r.tool);
          return true;
        },
      }),
      capabilities: new CapabilitySet([stopping]),
      loaded: { isToolLoaded: () => true },
    };
    c.policy = { approval: "on-risk" };
    expect(await executeTool("stopping.write", {}, c)).toEqual({
      success: false,
      summary: "stopping.write was not run: the run was aborted.",
    });
    expect(asked).toEqual([]);
  });

  it("caps a huge summary, keeping head and tail", async () => {
    const c = ctx();
    c.limits = { ...c.limits, outputBytes: 1000 };
    const r = await executeTool("demo.echo", { text: "0123456789", times: 10_000 }, c);
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(1000);
    expect(r.summary).toMatch(/bytes truncated/);
    expect(r.summary.startsWith("0123")).toBe(true);
  });
});

describe("executeTool: a policy check that fails for another reason", () => {
  it("reports a plain error from a policy as a tool failure, not a crash", async () => {
    const broken = defineCapability({
      manifest: { ...manifest, name: "brk", tools: [{ ...manifest.tools[0], name: "brk.echo" }] },
      handlers: { echo: async () => ({ success: true, summary: "ran" }) },
      policies: {
        echo: () => {
          throw new Error("parent is not a directory");
        },
      },
    });
    const c = { ...ctx(), capabilities: new CapabilitySet([broken]), loaded: { isToolLoaded: () => true } };
    expect(await executeTool("brk.echo", { text: "x" }, c)).toEqual({
      success: false,
      summary: "brk.echo failed: parent is not a directory",
    });
  });
});

describe("executeTool: a policy's own errors", () => {
  it("turns a not-found from a policy into a tool failure, not a rejection", async () => {
    const { CapgateError: Err } = await import("@capgate/schema");
    const picky = defineCapability({
      manifest: { ...manifest, name: "pky", tools: [{ ...manifest.tools[0], name: "pky.echo" }] },
      handlers: { echo: async () => ({ success: true, summary: "ran" }) },
      policies: {
        echo: () => {
          throw new Err("not_found", "a.txt is not a directory", { property: "path" });
        },
      },
    });
    const c = { ...ctx(), capabilities: new CapabilitySet([picky]), loaded: { isToolLoaded: () => true } };
    expect(await executeTool("pky.echo", { text: "x" }, c)).toEqual({
      success: false,
      summary: "pky.echo failed: a.txt is not a directory",
    });
  });
});

describe("executeTool: the call's signal", () => {
  const probe = defineCapability({
    manifest: {
      name: "sig",
      version: "1.0.0",
      description: "Signal probes for executor tests.",
      profileFit: [],
      tools: [
        { name: "sig.quiet", description: "Ignores its signal.", inputSchema: { type: "object" } },
        { name: "sig.wait", description: "Waits for its signal.", inputSchema: { type: "object" } },
        { name: "sig.late", description: "Reads its signal late.", inputSchema: { type: "object" } },
        { name: "sig.look", description: "Reports its context.", inputSchema: { type: "object" } },
      ],
    },
    handlers: {
      quiet: async () => ({ success: true, summary: "quiet" }),
      wait: (_args, c) =>
        new Promise((resolve) => {
          c.signal.addEventListener("abort", () =>
            resolve({ success: false, summary: `stopped: ${(c.signal.reason as Error).message}` }),
          );
        }),
      late: async (_args, c) => {
        // Reads its signal only once the test says so (after the call timed out).
        await late.go;
        late.read(c.signal);
        return { success: true, summary: "late" };
      },
      look: async (_args, c) => {
        const copy = { ...c };
        return {
          success: true,
          summary: JSON.stringify({
            keys: Object.keys(c).sort(),
            copyHasSignal: copy.signal instanceof AbortSignal,
          }),
        };
      },
    },
  });
  const late = {
    go: Promise.resolve(),
    release: () => {},
    seen: Promise.resolve(undefined as AbortSignal | undefined),
    read: (_s: AbortSignal) => {},
  };
  const resetLate = () => {
    late.go = new Promise<void>((r) => {
      late.release = r;
    });
    late.seen = new Promise<AbortSignal | undefined>((r) => {
      late.read = r;
    });
  };
  const base = () => ({
    ...createToolContext({ workspace: mkdtempSync(join(tmpdir(), "capgate-sig-")) }),
    capabilities: new CapabilitySet([probe]),
    loaded: { isToolLoaded: () => true },
  });

  it("makes no AbortSignal of the caller's when nothing reads one", async () => {
    let reads = 0;
    const abort = new LazyAbortController();
    const c = {
      ...base(),
      abort,
      get signal() {
        reads++;
        return abort.signal;
      },
    };
    expect(await executeTool("sig.quiet", {}, c)).toEqual({ success: true, summary: "quiet" });
    expect(reads).toBe(0);
  });

  it("a caller's lazy abort reaches a handler waiting on its signal, with the reason", async () => {
    const abort = new LazyAbortController();
    const c = {
      ...base(),
      abort,
      get signal() {
        return abort.signal;
      },
    };
    const pending = executeTool("sig.wait", {}, c);
    await new Promise((r) => setTimeout(r, 20));
    abort.abort(new Error("the client disconnected"));
    expect(await pending).toEqual({ success: false, summary: "stopped: the client disconnected" });
  });

  it("a caller's plain AbortSignal still reaches the handler", async () => {
    const controller = new AbortController();
    const pending = executeTool("sig.wait", {}, { ...base(), signal: controller.signal });
    await new Promise((r) => setTimeout(r, 20));
    controller.abort(new Error("run cancelled"));
    expect(await pending).toEqual({ success: false, summary: "stopped: run cancelled" });
  });

  it("a signal first read after the timeout is already aborted", async () => {
    const c = base();
    c.limits = { ...c.limits, timeoutMs: 50 };
    resetLate();
    const r = await executeTool("sig.late", {}, c);
    expect(r.summary).toMatch(/timed out after 50 ms/);
    late.release();
    const signal = await late.seen;
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as Error | undefined)?.message).toBe("timeout");
  });

  it("does not run a handler whose caller has already aborted", async () => {
    const abort = new LazyAbortController();
    abort.abort();
    const c = {
      ...base(),
      abort,
      get signal() {
        return abort.signal;
      },
    };
    expect(await executeTool("sig.quiet", {}, c)).toEqual({
      success: false,
      summary: "sig.quiet was not run: the run was aborted.",
    });
  });

  it("does not run a handler whose caller's AbortSignal has already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("run cancelled"));
    expect(await executeTool("sig.quiet", {}, { ...base(), signal: controller.signal })).toEqual({
      success: false,
      summary: "sig.quiet was not run: the run was aborted.",
    });
  });

  it("the handler's context has exactly the ToolContext fields, and a spread copy keeps the signal", async () => {
    const r = await executeTool("sig.look", {}, { ...base(), abort: new LazyAbortController() });
    expect(JSON.parse(r.summary)).toEqual({
      keys: [
        "approve",
        "env",
        "limits",
        "pauseTimeout",
        "policy",
        "profile",
        "resources",
        "services",
        "signal",
        "stateDir",
        "workspace",
      ],
      copyHasSignal: true,
    });
  });
});
