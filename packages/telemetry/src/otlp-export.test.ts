import type { RunEvent, RunEventBody } from "@capgate/loop";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { telemetrySettings } from "./settings.js";
import { startTelemetry } from "./telemetry.js";

// The exporter under test encodes; a real OTLP/HTTP receiver on 127.0.0.1 decodes with the
// opentelemetry-proto definitions (protobufjs), so the assertions read what a collector reads.

const SECRET = "s3cret-argument-value";
let seq = 0;
const at = (runId: string, body: RunEventBody): RunEvent =>
  ({ ...body, runId, seq: ++seq, time: new Date().toISOString() }) as RunEvent;

/** A run as the loop records it: a model turn, a script.run with a nested fs call and a nested MCP call, an approval, a policy refusal, a worker. */
function runEvents(runId: string): RunEvent[] {
  const parent = { step: 1, tool: "script.run", index: 0 };
  return [
    at(runId, {
      type: "run_started",
      goal: `goal mentioning ${SECRET}`,
      profile: "Coder",
      model: "openai:gpt-4o",
      workspace: "/ws",
      maxSteps: 10,
      mcp: true,
      kind: "goal",
    }),
    at(runId, {
      type: "model_request",
      step: 1,
      systemChars: 10,
      messageCount: 2,
      totalChars: 100,
      droppedSteps: 0,
    }),
    at(runId, {
      type: "model_response",
      step: 1,
      text: `reply ${SECRET}`,
      durationMs: 5,
      usage: { inputTokens: 120, outputTokens: 30 },
    }),
    at(runId, {
      type: "tool_called",
      step: 1,
      tool: "script.run",
      arguments: { source: SECRET },
      risk: "write",
    }),
    at(runId, {
      type: "tool_called",
      step: 1,
      tool: "fs.write",
      arguments: { path: "a.txt", content: SECRET },
      risk: "write",
      parent: { ...parent, index: 1 },
    }),
    at(runId, {
      type: "approval_requested",
      approvalId: "ap-1",
      tool: "fs.write",
      risk: "write",
      arguments: { content: SECRET },
      description: "write a.txt",
    }),
    at(runId, { type: "approval_resolved", approvalId: "ap-1", approved: true }),
    at(runId, {
      type: "tool_result",
      step: 1,
      tool: "fs.write",
      parent: { ...parent, index: 1 },
      success: true,
      summary: `wrote ${SECRET}`,
      via: "native",
      durationMs: 1,
    }),
    at(runId, {
      type: "tool_called",
      step: 1,
      tool: "every/get-sum",
      arguments: { a: 1, b: 2 },
      risk: "write",
      parent: { ...parent, index: 2 },
    }),
    at(runId, {
      type: "tool_result",
      step: 1,
      tool: "every/get-sum",
      parent: { ...parent, index: 2 },
      success: true,
      summary: "3",
      via: "mcp",
      server: "every",
      durationMs: 1,
    }),
    at(runId, {
      type: "tool_result",
      step: 1,
      tool: "script.run",
      success: true,
      summary: "done",
      via: "native",
      durationMs: 3,
    }),
    at(runId, {
      type: "tool_called",
      step: 2,
      tool: "shell.exec",
      arguments: { command: SECRET },
      risk: "exec",
    }),
    at(runId, {
      type: "tool_result",
      step: 2,
      tool: "shell.exec",
      success: false,
      summary: `refused: ${SECRET}`,
      via: "none",
      rejected: "policy_denied",
      durationMs: 0,
    }),
    at(runId, { type: "run_ended", outcome: "finished", steps: 2, rejections: 0 }),
  ];
}

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

async function export_(runId: string, env: Record<string, string>): Promise<ReceivedSpan[]> {
  const settings = telemetrySettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...env });
  if (!settings) throw new Error("telemetry should be on");
  const telemetry = await startTelemetry(settings);
  for (const event of runEvents(runId)) telemetry.observe(event);
  await telemetry.shutdown();
  const spans = await receiver.waitFor((all) => all.some((s) => s.attributes["capgate.run.id"] === runId));
  const traceId = spans.find((s) => s.attributes["capgate.run.id"] === runId)?.traceId;
  return spans.filter((s) => s.traceId === traceId);
}

const byName = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
  const span = spans.find((s) => s.name === name);
  if (!span) throw new Error(`no span ${name} in ${spans.map((s) => s.name).join(", ")}`);
  return span;
};

describe.each(["http/protobuf", "http/json"])("OTLP export over %s", (protocol) => {
  it("gives a run, its model turn and its tool calls spans in one trace, nested calls under their call", async () => {
    const runId = `run-${protocol}`;
    const spans = await export_(runId, {
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: "gate-test",
    });
    expect(receiver.requests.at(-1)?.contentType).toBe(
      protocol === "http/json" ? "application/json" : "application/x-protobuf",
    );
    expect(spans.map((s) => s.name).sort()).toEqual([
      "chat gpt-4o",
      "execute_tool every/get-sum",
      "execute_tool fs.write",
      "execute_tool script.run",
      "execute_tool shell.exec",
      "invoke_agent capgate",
    ]);
    const run = byName(spans, "invoke_agent capgate");
    expect(run.parentSpanId).toBe("");
    expect(run.resource["service.name"]).toBe("gate-test");
    expect(run.scope).toBe("@capgate/telemetry");
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "capgate",
      "gen_ai.conversation.id": runId,
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.provider.name": "openai",
      "capgate.run.outcome": "finished",
      "capgate.run.steps": 2,
    });
    const turn = byName(spans, "chat gpt-4o");
    expect(turn.parentSpanId).toBe(run.spanId);
    expect(turn.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 30,
    });
    const script = byName(spans, "execute_tool script.run");
    expect(script.parentSpanId).toBe(run.spanId);
    expect(script.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "script.run",
    });
    const write = byName(spans, "execute_tool fs.write");
    expect(write.parentSpanId).toBe(script.spanId);
    expect(write.events.map((e) => e.name)).toEqual([
      "capgate.approval.requested",
      "capgate.approval.resolved",
    ]);
    expect(write.events[1]?.attributes["capgate.approval.approved"]).toBe(true);
    const mcp = byName(spans, "execute_tool every/get-sum");
    expect(mcp.parentSpanId).toBe(script.spanId);
    expect(mcp.attributes).toMatchObject({ "mcp.method.name": "tools/call", "capgate.mcp.server": "every" });
    const refused = byName(spans, "execute_tool shell.exec");
    expect(refused.status.code).toBe(2); // STATUS_CODE_ERROR
    expect(refused.attributes["error.type"]).toBe("policy_denied");
    expect(refused.events.map((e) => e.name)).toEqual(["capgate.policy.denied"]);
    // No argument value, result, goal or model text leaves without captureContent.
    expect(JSON.stringify(spans)).not.toContain(SECRET);
  });
});

describe("content capture", () => {
  it("puts arguments, results and the goal on the spans only when the operator turns it on", async () => {
    const spans = await export_("run-content", {
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
    });
    expect(byName(spans, "execute_tool fs.write").attributes["gen_ai.tool.call.arguments"]).toBe(
      JSON.stringify({ path: "a.txt", content: SECRET }),
    );
    expect(byName(spans, "execute_tool fs.write").attributes["gen_ai.tool.call.result"]).toBe(
      `wrote ${SECRET}`,
    );
    expect(byName(spans, "invoke_agent capgate").attributes["capgate.goal"]).toContain(SECRET);
  });
});

describe("runs still open at shutdown", () => {
  it("are ended and exported, marked unfinished", async () => {
    const settings = telemetrySettings({ enabled: true, endpoint: receiver.endpoint }, {});
    if (!settings) throw new Error("telemetry should be on");
    const telemetry = await startTelemetry(settings);
    for (const event of runEvents("run-open").slice(0, 4)) telemetry.observe(event);
    await telemetry.shutdown();
    const spans = await receiver.waitFor((all) =>
      all.some((s) => s.attributes["capgate.run.id"] === "run-open"),
    );
    const run = spans.find((s) => s.attributes["capgate.run.id"] === "run-open");
    expect(run?.attributes["capgate.run.outcome"]).toBe("unfinished");
    expect(spans.some((s) => s.traceId === run?.traceId && s.name === "execute_tool script.run")).toBe(true);
  });
});
