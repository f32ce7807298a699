import { afterEach, describe, expect, it, vi } from "vitest";
import { localServerExample } from "../examples/local-server.js";
import { scriptedExample } from "../examples/scripted.js";
import { chatCompletion, type FakeServer, startFakeServer } from "./fake-provider-server.js";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.restoreAllMocks();
});

// The README's examples, run for real so they cannot rot.
describe("examples", () => {
  it("scripted example replays its replies", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    expect(await scriptedExample()).toEqual([
      '{"name": "capability_search", "arguments": {"query": "read a file"}}',
      '{"name": "finish", "arguments": {"summary": "done"}}',
    ]);
  });

  it("local-server example talks Chat Completions to the given base URL", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    server = await startFakeServer(() => chatCompletion({ text: "Paris" }));
    expect(await localServerExample(`${server.url}/v1`)).toBe("Paris");
    expect(server.requests[0]!.body.model).toBe("llama3.1:8b");
    expect(server.requests[0]!.body.temperature).toBe(0);
  });
});
