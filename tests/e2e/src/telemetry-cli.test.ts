import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { type OtlpReceiver, startOtlpReceiver } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, childEnv, sandbox } from "./support.js";

// The built CLI with the standard OpenTelemetry variables, as an operator sets them: the
// call's span reaches a real OTLP/HTTP receiver (decoding with the proto definitions) before
// the process exits, and the export thread does not hold the process after its work.

const run = promisify(execFile);
let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

describe("capgate call with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("exports the call's span and exits", async () => {
    const box = sandbox({}, { "notes.txt": "traced\n" });
    const { stdout } = await run(
      process.execPath,
      [CLI_BIN, "call", "fs.read", '{"path":"notes.txt"}', "--config", box.configFile],
      {
        cwd: box.workspace,
        env: childEnv(box.home, {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_SERVICE_NAME: "cli-e2e",
        }),
        timeout: 60_000,
      },
    );
    expect(stdout).toContain("traced");
    const spans = await receiver.waitFor((all) => all.some((s) => s.resource["service.name"] === "cli-e2e"));
    const span = spans.find((s) => s.resource["service.name"] === "cli-e2e");
    expect(span).toMatchObject({
      name: "execute_tool fs.read",
      attributes: expect.objectContaining({
        "gen_ai.tool.name": "fs.read",
        "gen_ai.operation.name": "execute_tool",
      }),
    });
    // Content stays off by default: the argument is not on the span.
    expect(JSON.stringify(span)).not.toContain("notes.txt");
  }, 120_000);
});
