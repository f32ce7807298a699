import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "./create-model.js";
import {
  anthropicMessage,
  chatCompletion,
  type FakeServer,
  startFakeServer,
} from "./fake-provider-server.js";

// The 1×1 PNG server-everything's get-tiny-image would send is longer; any valid base64 does here.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = {
  system: "s",
  messages: [
    { role: "user" as const, content: "Goal: look" },
    { role: "assistant" as const, content: '{"name":"capability_call"}' },
    {
      role: "user" as const,
      content: "cua.screenshot → ok\n[image image/png 70 bytes: saved as runs/x/1-2.png]",
      images: [{ data: PNG, mimeType: "image/png" }],
    },
  ],
};

describe("images in messages", () => {
  it("openai (chat completions): the user message carries an image_url part with the data URL", async () => {
    server = await startFakeServer(() => chatCompletion({ text: "ok" }));
    const m = createModel("openai:gpt-test", {
      env: { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "sk-test" },
      maxRetries: 0,
    });
    await m.generate(request);
    const messages = server.requests[0]!.body.messages as Array<{ role: string; content: unknown }>;
    const last = messages[messages.length - 1]!;
    expect(last.role).toBe("user");
    expect(last.content).toEqual([
      { type: "text", text: request.messages[2]!.content },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
    // Messages without images stay plain strings.
    expect(messages.find((x) => x.role === "user")?.content).toBe("Goal: look");
  });

  it("anthropic (messages): the user message carries a base64 image block", async () => {
    server = await startFakeServer(() => anthropicMessage({ text: "ok" }));
    const m = createModel("anthropic:claude-test", {
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-test" },
      maxRetries: 0,
    });
    await m.generate(request);
    const messages = server.requests[0]!.body.messages as Array<{ role: string; content: unknown }>;
    const last = messages[messages.length - 1] as { content: Array<Record<string, unknown>> };
    expect(last.content).toContainEqual(
      expect.objectContaining({
        type: "image",
        source: { type: "base64", media_type: "image/png", data: PNG },
      }),
    );
    expect(last.content).toContainEqual(
      expect.objectContaining({ type: "text", text: request.messages[2]!.content }),
    );
  });

  it("rejects images that are not images, naming the field, before sending", async () => {
    server = await startFakeServer(() => chatCompletion({ text: "ok" }));
    const m = createModel("openai:gpt-test", {
      env: { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" },
    });
    await expect(
      m.generate({
        system: "s",
        messages: [{ role: "user", content: "x", images: [{ data: "AAAA", mimeType: "text/html" }] }],
      }),
    ).rejects.toMatchObject({ property: "messages[0].images[0]" });
    expect(server.requests).toHaveLength(0);
  });
});
