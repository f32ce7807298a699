import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileRunStore, newRunId, type RunEvent } from "@capgate/loop";
import { describe, expect, it } from "vitest";
import { RunFeed } from "./run-feed.js";

describe("RunFeed", () => {
  it("a read that fails after the replay drops the connection (the client resumes) instead of ending the stream as if the run were over", async () => {
    const store = new FileRunStore(mkdtempSync(join(tmpdir(), "capgate-feed-")));
    const runId = newRunId();
    store.append({
      type: "run_started",
      goal: "g",
      profile: "Coder",
      model: "m",
      workspace: "/w",
      maxSteps: 1,
      mcp: false,
      kind: "goal",
      runId,
      seq: 1,
      time: new Date().toISOString(),
    } as RunEvent);
    let reads = 0;
    const events = store.events.bind(store);
    // The second read (after "is it still running?" said no) fails, as a busy pool would.
    store.events = async (id, after) => {
      if (++reads === 2) throw new Error("timeout exceeded when trying to connect");
      return events(id, after);
    };
    const feed = new RunFeed(store, 60_000);
    const server = createServer(
      (_req, res) => void feed.stream(res, runId, { after: 0, isActive: () => false }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/`);
      const body = await response.text().then(
        (text) => ({ ended: "cleanly", text }),
        (error: Error) => ({ ended: "dropped", text: error.message }),
      );
      expect(body.ended).toBe("dropped");
      expect(reads).toBe(2);
    } finally {
      feed.close();
      server.close();
    }
  });
});
