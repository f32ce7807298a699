import { mkdirSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import {
  type OtlpReceiver,
  type ReceivedSpan,
  shellForTests,
  startOtlpReceiver,
} from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CapgateConfig } from "./config.js";
import { createHarness } from "./harness.js";

// OpenTelemetry through the harness: a real goal run (fs, the sandboxed shell's policy, a
// real stdio MCP server from npm inside a script.run) and a direct call, exported over
// OTLP/HTTP to a receiver on 127.0.0.1 that decodes with the opentelemetry-proto definitions.

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const act = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

function everythingServer(): { command: string; args: string[] } {
  const require = createRequire(import.meta.url);
  const entry = join(
    dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
    "dist",
    "index.js",
  );
  return { command: process.execPath, args: [entry, "stdio"] };
}

function dirs() {
  const root = mkdtempSync(join(tmpdir(), "capgate-otel-"));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  return { workspace, stateDir: join(root, "state") };
}

const named = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
  const span = spans.find((s) => s.name === name);
  if (!span) throw new Error(`no span ${name} among ${spans.map((s) => s.name).join(", ")}`);
  return span;
};

describe("telemetry through the harness", () => {
  it("is off, and not loaded, without config or OTEL_* variables", async () => {
    const h = await createHarness({
      ...dirs(),
      processEnv: { PATH: process.env.PATH },
      config: { shell: shellForTests() },
    });
    try {
      expect(h.telemetry).toBeUndefined();
    } finally {
      await h.close();
    }
  });

  it("exports a goal run's spans: turns, calls, a script's nested fs and MCP calls under it, approvals and a refusal", async () => {
    const config: CapgateConfig = {
      shell: shellForTests(),
      approval: "on-risk",
      mcpServers: { every: everythingServer() },
    } as CapgateConfig;
    const h = await createHarness({
      ...dirs(),
      config,
      processEnv: { PATH: process.env.PATH, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      approve: async () => true,
    });
    let runId: string;
    try {
      expect(h.telemetry?.settings.url).toBe(`${receiver.endpoint}/v1/traces`);
      await h.indexMcpTools();
      const model = createScriptedModel([
        act("capability_load", { name: "fs" }),
        act("capability_load", { name: "mcp:every" }),
        act("capability_load", { name: "script" }),
        act("capability_call", {
          tool: "script.run",
          arguments: {
            source: `await tools.fs.write({ path: "out.txt", content: "private-content" });
              const sum = await tools.call("every/get-sum", { a: 2, b: 40 });
              return sum.summary;`,
          },
        }),
        act("capability_call", { tool: "fs.read", arguments: { path: "../../etc/passwd" } }),
        act("mark_impossible", { reason: "done" }),
      ]);
      const r = await h.runGoal({ goal: "otel goal", profile: "Orchestrator", model, mcp: true });
      runId = r.runId;
      expect((await h.callTool("fs.read", { path: "out.txt" })).result.success).toBe(true);
    } finally {
      // Closing the harness ends and flushes what it traced.
      await h.close();
    }
    const spans = await receiver.waitFor((all) => all.some((s) => s.attributes["capgate.run.id"] === runId));
    const run = spans.find((s) => s.attributes["capgate.run.id"] === runId) as ReceivedSpan;
    const trace = spans.filter((s) => s.traceId === run.traceId);
    expect(run.name).toBe("invoke_agent capgate");
    expect(run.attributes["gen_ai.operation.name"]).toBe("invoke_agent");
    expect(trace.filter((s) => s.name.startsWith("chat ")).every((s) => s.parentSpanId === run.spanId)).toBe(
      true,
    );
    expect(trace.filter((s) => s.name.startsWith("chat ")).length).toBeGreaterThanOrEqual(5);
    const script = named(trace, "execute_tool script.run");
    expect(script.parentSpanId).toBe(run.spanId);
    expect(script.status.code).toBe(0);
    const write = named(trace, "execute_tool fs.write");
    expect(write.parentSpanId).toBe(script.spanId);
    expect(write.events.map((e) => e.name)).toEqual([
      "capgate.approval.requested",
      "capgate.approval.resolved",
    ]);
    const sum = named(trace, "execute_tool every/get-sum");
    expect(sum.parentSpanId).toBe(script.spanId);
    expect(sum.attributes).toMatchObject({ "mcp.method.name": "tools/call", "capgate.mcp.server": "every" });
    const refused = trace.find(
      (s) => s.name === "execute_tool fs.read" && s.parentSpanId === run.spanId,
    ) as ReceivedSpan;
    expect(refused.attributes["error.type"]).toBe("policy_denied");
    expect(refused.events.map((e) => e.name)).toContain("capgate.policy.denied");
    // The direct call after the run: its own trace, one span.
    const direct = spans.find((s) => s.name === "execute_tool fs.read" && s.traceId !== run.traceId);
    expect(direct?.parentSpanId).toBe("");
    expect(direct?.kind).toBe(2); // SPAN_KIND_SERVER
    // Argument values stay home unless the operator turns content capture on.
    expect(JSON.stringify(spans)).not.toContain("private-content");
  }, 120_000);

  it("records a direct call's approval on its span and still tells the caller's own observer", async () => {
    const h = await createHarness({
      ...dirs(),
      processEnv: { PATH: process.env.PATH, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      config: { shell: shellForTests() },
    });
    const seen: string[] = [];
    try {
      const outcome = await h.callTool(
        "fs.write",
        { path: "direct-approved.txt", content: "x" },
        {
          approval: "always",
          approve: async () => true,
          onApproval: {
            requested: (request) => seen.push(`requested ${request.tool}`),
            resolved: (answer) => seen.push(`resolved ${answer.approved}`),
          },
        },
      );
      expect(outcome.result.success).toBe(true);
    } finally {
      await h.close();
    }
    expect(seen).toEqual(["requested fs.write", "resolved true"]);
    const spans = await receiver.waitFor((all) =>
      all.some((s) => s.name === "execute_tool fs.write" && s.parentSpanId === "" && s.events.length > 0),
    );
    const direct = spans.find(
      (s) => s.name === "execute_tool fs.write" && s.parentSpanId === "" && s.events.length > 0,
    ) as ReceivedSpan;
    expect(direct.events.map((e) => e.name)).toEqual([
      "capgate.approval.requested",
      "capgate.approval.resolved",
    ]);
    expect(direct.events[1]?.attributes["capgate.approval.approved"]).toBe(true);
  }, 60_000);
});
