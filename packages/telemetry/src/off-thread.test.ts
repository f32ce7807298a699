import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type OtlpReceiver, startOtlpReceiver } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The export thread must never keep a process alive on its own (a CLI run ends when its
// work ends), yet a flush or shutdown must hold the process until the spans are sent.
// Each case is a real Node process using the built package, exporting to a real receiver.

const run = promisify(execFile);
const dist = new URL("../dist/index.js", import.meta.url).href;
const script = (body: string) => `
import { startTelemetry, telemetrySettings } from ${JSON.stringify(dist)};
const telemetry = await startTelemetry(telemetrySettings({ enabled: true, endpoint: process.env.ENDPOINT }, {}));
const traced = (tool) => telemetry.traceToolCall({ tool, arguments: {} }, async () => ({ via: "native", result: { success: true, summary: "ok" } }));
${body}
`;

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

async function node(body: string) {
  return run(process.execPath, ["--input-type=module", "-e", script(body)], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    env: { ...process.env, ENDPOINT: receiver.endpoint },
    timeout: 30_000,
  });
}

describe("the export thread", () => {
  it("holds the process through a flush with nothing else pending, and the span arrives", async () => {
    const { stdout } = await node(
      `await traced("wait.flush"); await telemetry.forceFlush(); console.log("flushed");`,
    );
    expect(stdout.trim()).toBe("flushed");
    expect(receiver.spans.some((s) => s.attributes["gen_ai.tool.name"] === "wait.flush")).toBe(true);
  });

  it("does not keep a process alive that never shuts telemetry down", async () => {
    // execFile's timeout kills a process that hangs; a kill is an error, not this output.
    const { stdout } = await node(`await traced("never.shut"); console.log("done");`);
    expect(stdout.trim()).toBe("done");
  });

  it("sends every span of a burst larger than one relay and one export batch on shutdown", async () => {
    const { stdout } = await node(
      `for (let i = 0; i < 1500; i++) await traced("burst." + i); await telemetry.shutdown(); console.log("stopped");`,
    );
    expect(stdout.trim()).toBe("stopped");
    const burst = receiver.spans.filter((s) => String(s.attributes["gen_ai.tool.name"]).startsWith("burst."));
    expect(new Set(burst.map((s) => s.attributes["gen_ai.tool.name"])).size).toBe(1500);
  });
});
