import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { profiles as builtinProfiles, type ProfilePolicy } from "@capgate/profiles";
import { Registry } from "@capgate/registry";
import { shellForTests } from "@capgate/test-system-parts";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  defineCapability,
  resolveInWorkspace,
  workspacePathPolicy,
} from "@capgate/tools";
import type { LoopEnvironment } from "../deps.js";
import { MemoryStore } from "../memory-store.js";
import { FileRunStore } from "../run-store.js";

// Small capabilities of the tests' own: the loop may not depend on the built-in ones.
const notesManifest = {
  name: "notes",
  version: "0.1.0",
  description: "Write and read text files (notes) in the workspace.",
  profileFit: ["Coder"],
  tools: [
    {
      name: "notes.write",
      description: "Write a text file in the workspace.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: { type: "string", minLength: 1 }, text: { type: "string" } },
        required: ["path", "text"],
      },
    },
    {
      name: "notes.read",
      description: "Read a text file of the workspace.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path: { type: "string", minLength: 1 } },
        required: ["path"],
      },
    },
  ],
} as const;

export const notes = defineCapability({
  manifest: notesManifest,
  handlers: {
    write: async (args, ctx) => {
      const path = await resolveInWorkspace(ctx, args.path, { forWrite: true, allowMissing: true });
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, args.text);
      return { success: true, summary: `wrote ${args.text.length} chars to ${args.path}` };
    },
    read: async (args, ctx) => ({
      success: true,
      summary: readFileSync(await resolveInWorkspace(ctx, args.path), "utf8"),
    }),
  },
  policies: { write: workspacePathPolicy(["path"], { forWrite: true }), read: workspacePathPolicy(["path"]) },
});

const clockManifest = {
  name: "clock",
  version: "0.1.0",
  description: "Tell the time; wait a while.",
  profileFit: ["Researcher"],
  tools: [
    {
      name: "clock.now",
      description: "The current time.",
      risk: "read",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
    {
      name: "clock.sleep",
      description: "Wait (until aborted).",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { ms: { type: "integer", minimum: 1 } },
        required: ["ms"],
      },
    },
  ],
} as const;

export const clock = defineCapability({
  manifest: clockManifest,
  handlers: {
    now: async () => ({ success: true, summary: new Date(0).toISOString() }),
    sleep: (args, ctx) =>
      new Promise((resolve) => {
        const t = setTimeout(() => resolve({ success: true, summary: "slept" }), args.ms);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          resolve({ success: false, summary: "aborted" });
        });
      }),
  },
});

const delegateManifest = {
  name: "delegate",
  version: "0.1.0",
  description: "Hand a sub-goal to a worker and wait for it.",
  profileFit: ["Orchestrator"],
  tools: [
    {
      name: "delegate.run",
      description: "Spawn a worker on a goal and wait for its result.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { goal: { type: "string", minLength: 1 }, profile: { type: "string" } },
        required: ["goal"],
      },
    },
  ],
} as const;

/** A stand-in for the workers capability (a capability package the loop may not import): uses ctx.services.workers. */
export const delegate = defineCapability({
  manifest: delegateManifest,
  handlers: {
    run: async (args, ctx) => {
      const workers = ctx.services.workers;
      if (!workers) return { success: false, summary: "no worker service" };
      const w = await workers.spawn(
        { goal: args.goal, ...(args.profile ? { profile: args.profile } : {}) },
        ctx.signal,
      );
      const done = await workers.wait(w.id, 15_000, ctx.signal);
      return {
        success: done.status === "finished",
        summary: `${done.id} ${done.status}: ${done.summary ?? ""}`,
        data: done,
      };
    },
  },
});

const chainManifest = {
  name: "chain",
  version: "0.1.0",
  description: "Call several tools in a row.",
  profileFit: ["Orchestrator"],
  tools: [
    {
      name: "chain.all",
      description: "Call each listed tool in order through the host's call service.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          calls: {
            type: "array",
            items: {
              type: "object",
              additionalProperties: false,
              properties: { tool: { type: "string" }, arguments: { type: "object" } },
              required: ["tool"],
            },
          },
        },
        required: ["calls"],
      },
    },
  ],
} as const;

/** A stand-in for the script capability (a package the loop may not import): uses ctx.services.calls. */
export const chain = defineCapability({
  manifest: chainManifest,
  handlers: {
    all: async (args, ctx) => {
      const calls = ctx.services.calls;
      if (!calls) return { success: false, summary: "no call service" };
      const out: Array<{ tool: string; ok: boolean; summary?: string; code?: string; property?: string }> =
        [];
      for (const call of args.calls) {
        try {
          const r = await calls.call(call.tool, (call.arguments ?? {}) as Record<string, unknown>, {
            signal: ctx.signal,
          });
          out.push({ tool: call.tool, ok: r.success, summary: r.summary });
        } catch (error) {
          const e = error as { code?: string; property?: string; message: string };
          out.push({
            tool: call.tool,
            ok: false,
            summary: e.message,
            ...(e.code ? { code: e.code } : {}),
            ...(e.property ? { property: e.property } : {}),
          });
        }
      }
      return { success: true, summary: JSON.stringify(out), data: out };
    },
  },
});

/** Profiles over the test capabilities, same shape and rules as the built-ins. */
export const testProfiles: Record<string, ProfilePolicy> = {
  Orchestrator: builtinProfiles.Orchestrator,
  Coder: { ...builtinProfiles.Coder, preload: ["notes"] },
  Verifier: { ...builtinProfiles.Verifier, preload: ["notes"] },
  Researcher: { ...builtinProfiles.Researcher, preload: ["clock"] },
  ComputerOperator: { ...builtinProfiles.ComputerOperator, preload: [] },
};

export interface TestEnv {
  env: LoopEnvironment;
  workspace: string;
  stateDir: string;
}

export function makeEnv(overrides: Partial<LoopEnvironment> = {}): TestEnv {
  const root = mkdtempSync(join(tmpdir(), "capgate-loop-"));
  const workspace = join(root, "ws");
  const stateDir = join(root, "state");
  mkdirSync(workspace);
  const capabilities = new CapabilitySet([notes, clock, delegate, chain]);
  const registry = new Registry();
  for (const c of capabilities.list()) registry.register(c.manifest);
  const env: LoopEnvironment = {
    registry,
    capabilities,
    profiles: testProfiles,
    stateDir,
    store: new FileRunStore(stateDir),
    memory: new MemoryStore(stateDir),
    // The sandbox on where bubblewrap works (or is required); off on a machine without it.
    policy: { shell: shellForTests() },
    limits: { ...DEFAULT_LIMITS, timeoutMs: 20_000 },
    resources: createHostResources(),
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    ...overrides,
  };
  return { env, workspace, stateDir };
}

/** `{"name": …, "arguments": …}` as a model would send it. */
export function act(name: string, args: Record<string, unknown> = {}): string {
  return JSON.stringify({ name, arguments: args });
}
