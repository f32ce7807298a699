import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolManifest } from "@capgate/schema";
import {
  type ApprovalHook,
  type Capability,
  CapabilitySet,
  createToolContext,
  defineCapability,
  type ExecuteContext,
  executeTool,
  type PolicyConfig,
  type ToolCallService,
  type ToolLimits,
} from "@capgate/tools";
import { resolveInWorkspace, workspacePathPolicy } from "@capgate/workspace";
import { capability as scriptCapability } from "../src/index.js";

/**
 * A small real capability for the script package's own tests (the package may not depend
 * on other capabilities): text notes in a temp workspace, through the real executor,
 * path confinement and approvals. The loop and harness tests run scripts over fs, shell and
 * MCP servers.
 */
export const notes = defineCapability({
  manifest: {
    name: "notes",
    version: "0.1.0",
    manifestFormat: 1,
    description: "Text notes in the workspace, for the script capability's tests.",
    profileFit: ["Orchestrator"],
    tools: [
      {
        name: "notes.read",
        description: "Read a note's text.",
        risk: "read",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: { path: { type: "string", minLength: 1, maxLength: 200, description: "Note path." } },
          required: ["path"],
        },
      },
      {
        name: "notes.write",
        description: "Write a note.",
        risk: "write",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: {
            path: { type: "string", minLength: 1, maxLength: 200, description: "Note path." },
            text: { type: "string", maxLength: 100000, description: "The note's text." },
          },
          required: ["path", "text"],
        },
      },
      {
        name: "notes.echo",
        description: "Return the arguments as data.",
        risk: "read",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: {
            value: { description: "Anything JSON." },
            fail: { type: "boolean", description: "Return success: false." },
          },
        },
      },
    ],
  } as const,
  handlers: {
    read: async (args, ctx) => {
      const real = await resolveInWorkspace(ctx, args.path);
      const text = readFileSync(real, "utf8");
      return { success: true, summary: text, data: { path: args.path, text } };
    },
    write: async (args, ctx) => {
      const real = await resolveInWorkspace(ctx, args.path, { forWrite: true, allowMissing: true });
      writeFileSync(real, args.text);
      return {
        success: true,
        summary: `wrote ${args.path}`,
        data: { path: args.path, bytes: args.text.length },
      };
    },
    echo: async (args) =>
      args.fail
        ? { success: false, summary: "echo failed as asked", data: { value: args.value } }
        : { success: true, summary: "echoed", data: args.value },
  },
  policies: { read: workspacePathPolicy("path"), write: workspacePathPolicy("path") },
});

/**
 * A capability whose one tool, `probe.afterAsk`, returns once `asked()` has resolved (a test
 * resolves it when its approver is asked) or once the call is stopped: a script stopped
 * before the approval was asked must not hang there.
 */
export function afterAskProbe(asked: () => Promise<unknown>): Capability {
  return defineCapability({
    manifest: {
      name: "probe",
      version: "0.1.0",
      description: "Returns once the pending approval has been asked.",
      profileFit: ["Orchestrator"],
      tools: [
        {
          name: "probe.afterAsk",
          description: "Return once the approval has been asked.",
          risk: "read",
          inputSchema: { type: "object", additionalProperties: false, properties: {} },
        },
      ],
    } as const,
    handlers: {
      afterAsk: async (_args, ctx) => {
        await Promise.race([
          asked(),
          new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true })),
        ]);
        return { success: true, summary: "asked" };
      },
    },
  });
}

export interface TestGate {
  workspace: string;
  /** Every nested call the service made, in order. */
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  ctx: ExecuteContext;
  run(source: string, timeoutMs?: number): ReturnType<typeof executeTool>;
}

/**
 * The executor with `notes` and `script` registered; nested calls go through executeTool
 * again (the loop's service does the same plus events and budgets).
 */
export function testGate(
  options: {
    loaded?: string[];
    approval?: PolicyConfig["approval"];
    approve?: ApprovalHook;
    limits?: Partial<ToolLimits>;
    extra?: Capability[];
    script?: Capability;
  } = {},
): TestGate {
  const workspace = mkdtempSync(join(tmpdir(), "script-"));
  const capabilities = new CapabilitySet([
    options.script ?? scriptCapability,
    notes,
    ...(options.extra ?? []),
  ]);
  const loadedNames = new Set(options.loaded ?? ["script", "notes"]);
  const loaded = { isToolLoaded: (tool: string) => loadedNames.has(tool.split(".")[0] ?? "") };
  const calls: TestGate["calls"] = [];
  const base = createToolContext({
    workspace,
    policy: { approval: options.approval ?? "never" },
    ...(options.approve ? { approve: options.approve } : {}),
    ...(options.limits ? { limits: { ...createToolContext({ workspace }).limits, ...options.limits } } : {}),
  });
  const service = (depth: number): ToolCallService => ({
    depth,
    tools: () =>
      capabilities
        .list()
        .filter((c) => loadedNames.has(c.manifest.name))
        .flatMap((c) => c.manifest.tools as ToolManifest[]),
    call: (tool, args, callOptions) => {
      calls.push({ tool, args });
      const approve = base.approve;
      return executeTool(tool, args, {
        ...base,
        signal: callOptions.signal,
        approve: approve
          ? async (request, signal) => {
              const resume = callOptions.onApprovalWait?.();
              try {
                return await approve(request, signal);
              } finally {
                resume?.();
              }
            }
          : undefined,
        services: { calls: service(depth + 1) },
        capabilities,
        loaded,
      });
    },
  });
  const ctx: ExecuteContext = { ...base, services: { calls: service(1) }, capabilities, loaded };
  return {
    workspace,
    calls,
    ctx,
    run: (source, timeoutMs) =>
      executeTool(
        "script.run",
        { source, ...(timeoutMs !== undefined ? { timeout_ms: timeoutMs } : {}) },
        ctx,
      ),
  };
}
