import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createScriptedModel, type GenerateRequest, type ModelClient } from "@capgate/models";
import { CapabilitySet, defineCapability, type ToolResult } from "@capgate/tools";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { externaliseContent } from "./rich-content.js";
import { act, clock, makeEnv, notes } from "./test-support/env.js";

// A real 1×1 PNG, and 300 KiB of "audio", so the trace has something big to keep out of its lines.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const AUDIO = Buffer.alloc(300 * 1024, 7);

const pictures = defineCapability({
  manifest: {
    name: "pictures",
    version: "0.1.0",
    description: "Take a picture.",
    profileFit: ["Orchestrator"],
    tools: [
      {
        name: "pictures.snap",
        description: "Take a picture and return it.",
        risk: "read",
        inputSchema: { type: "object", additionalProperties: false, properties: {} },
      },
    ],
  } as const,
  handlers: {
    snap: async (): Promise<ToolResult> => ({
      success: true,
      summary: "took a picture",
      content: [
        { type: "text", text: "took a picture", annotations: { audience: ["user"] } },
        { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
        { type: "audio", data: AUDIO.toString("base64"), mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///pics/1.png", name: "1.png", mimeType: "image/png" },
        {
          type: "resource",
          resource: { uri: "mem://blob", mimeType: "application/octet-stream", blob: "AAEC" },
        },
      ],
      structuredContent: { width: 1, height: 1 },
    }),
  },
});

function recording(model: ModelClient): ModelClient & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    requests,
    generate: (request) => {
      requests.push(structuredClone({ ...request, signal: undefined }));
      return model.generate(request);
    },
  };
}

describe("rich tool results in the loop", () => {
  it("saves binary content as files under the run, references them from the JSONL, describes them for the model and sends the image", async () => {
    const { env, workspace, stateDir } = makeEnv({
      capabilities: new CapabilitySet([notes, clock, pictures]),
    });
    env.registry.register(pictures.manifest);
    const model = recording(
      createScriptedModel([
        act("capability_load", { name: "pictures" }),
        act("capability_call", { tool: "pictures.snap", arguments: {} }),
        act("mark_impossible", { reason: "only testing" }),
      ]),
    );
    const r = await runGoal(env, { goal: "take a picture", profile: "Orchestrator", model, workspace });
    expect(r.outcome).toBe("impossible");

    const runDir = join(stateDir, "runs", r.runId);
    const files = readdirSync(runDir).sort();
    expect(files).toEqual(["2-1.png", "2-2.wav", "2-3.bin"]);
    expect(readFileSync(join(runDir, "2-1.png")).equals(PNG)).toBe(true);
    expect(readFileSync(join(runDir, "2-2.wav")).equals(AUDIO)).toBe(true);
    expect(statSync(join(runDir, "2-1.png")).mode & 0o777).toBe(0o600);

    const lines = readFileSync(join(stateDir, "runs", `${r.runId}.jsonl`), "utf8")
      .trim()
      .split("\n");
    // Never inline megabytes: every line stays small although the audio alone is 400 KiB of base64.
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(20_000);
    const result = lines.map((l) => JSON.parse(l) as RunEvent).find((e) => e.type === "tool_result");
    expect(result?.type === "tool_result" && result.content).toEqual([
      { type: "text", text: "took a picture", annotations: { audience: ["user"] } },
      { type: "image", mimeType: "image/png", file: `runs/${r.runId}/2-1.png`, bytes: PNG.length },
      { type: "audio", mimeType: "audio/wav", file: `runs/${r.runId}/2-2.wav`, bytes: AUDIO.length },
      { type: "resource_link", uri: "file:///pics/1.png", name: "1.png", mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "mem://blob",
          mimeType: "application/octet-stream",
          file: `runs/${r.runId}/2-3.bin`,
          bytes: 3,
        },
      },
    ]);
    expect(result?.type === "tool_result" && result.structuredContent).toEqual({ width: 1, height: 1 });

    // The model's next message: a faithful text rendering, plus the image as an image.
    const next = model.requests[2]!;
    const last = next.messages[next.messages.length - 1]!;
    expect(last.content).toContain(`[image image/png ${PNG.length} bytes: saved as runs/${r.runId}/2-1.png]`);
    expect(last.content).toContain(
      `[audio audio/wav ${AUDIO.length} bytes: saved as runs/${r.runId}/2-2.wav]`,
    );
    expect(last.content).toContain('[resource link file:///pics/1.png name="1.png" image/png]');
    expect(last.content).toContain('structuredContent: {"width":1,"height":1}');
    expect(last.images).toEqual([{ data: PNG.toString("base64"), mimeType: "image/png" }]);
    // Only the newest result's images travel: the request before had none.
    expect(model.requests[1]!.messages.some((m) => m.images)).toBe(false);
  });

  it("without a writer, binary content is described as not saved and still left out of the trace", () => {
    const out = externaliseContent([{ type: "image", data: "AAAA", mimeType: "image/png" }], 1, undefined);
    expect(out.traced).toEqual([{ type: "image", mimeType: "image/png", file: "", bytes: 3 }]);
    expect(out.lines).toEqual(["[image image/png 3 bytes: not saved]"]);
  });
});
