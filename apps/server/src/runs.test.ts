import { readFileSync } from "node:fs";
import { type JsonSchema, validate } from "@capgate/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  action,
  collectEvents,
  readSse,
  readTrace,
  type ServerProcess,
  type StreamedEvent,
  startServerProcess,
  waitFor,
} from "./test-support/server-process.js";

interface ErrorJson {
  error: { code: string; message: string; property?: string };
}

interface RunJson {
  id: string;
  runId: string;
  goal: string;
  status: string;
  outcome?: string;
  profile?: string;
  pendingApprovals: Array<{
    approvalId: string;
    tool: string;
    risk: string;
    argumentsHash: string;
    expiresAt?: string;
  }>;
}

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess({ options: { maxConcurrentRuns: 1, heartbeatMs: 200 } });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  server?.cleanup();
});

/** A Coder run that writes a file, verifies it and finishes. */
function finishingScript(name: string): unknown[] {
  return [
    action("capability_call", { tool: "fs.write", arguments: { path: name, content: "written by a run\n" } }),
    action("verify", { claim: `${name} exists`, command: `test -f ${name}` }),
    action("finish", { summary: `wrote ${name}`, evidence: "test -f passed" }),
  ];
}

async function startRun(body: Record<string, unknown>): Promise<string> {
  const response = await server.api("/runs", { body });
  const json = (await response.json()) as { id: string } & ErrorJson;
  expect(response.status, JSON.stringify(json)).toBe(202);
  return json.id;
}

async function getRun(id: string): Promise<RunJson> {
  const response = await server.api(`/runs/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as RunJson;
}

function expectContiguous(events: StreamedEvent[], from = 1): void {
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + from));
}

describe("goal runs", () => {
  let finishedId: string;
  let finishedEvents: StreamedEvent[];

  it("starts a run (202), streams its events live to run_ended, and stores them", async () => {
    finishedId = await startRun({
      goal: "write done.txt",
      profile: "Coder",
      model: server.script(finishingScript("done.txt")),
    });
    finishedEvents = await collectEvents(server, finishedId);
    const types = finishedEvents.map((e) => e.type);
    expect(types[0]).toBe("run_started");
    expect(types.at(-1)).toBe("run_ended");
    expect(types).toEqual(expect.arrayContaining(["tool_called", "tool_result", "verified", "finished"]));
    expect(finishedEvents.at(-1)).toMatchObject({ type: "run_ended", outcome: "finished" });
    // Nothing lost, nothing doubled.
    expectContiguous(finishedEvents);
    expect(readTrace(server.home, finishedId)).toEqual(finishedEvents);
  }, 30_000);

  it("lists and describes the run", async () => {
    const list = (await (await server.api("/runs")).json()) as RunJson[];
    const entry = list.find((r) => r.id === finishedId);
    expect(entry).toMatchObject({
      goal: "write done.txt",
      profile: "Coder",
      outcome: "finished",
      status: "ended",
    });
    expect(await getRun(finishedId)).toMatchObject({
      id: finishedId,
      status: "ended",
      outcome: "finished",
      pendingApprovals: [],
    });
  });

  it("replays a finished run and resumes after Last-Event-ID", async () => {
    const replay = await collectEvents(server, finishedId);
    expect(replay).toEqual(finishedEvents);
    const resumed = await collectEvents(server, finishedId, { lastEventId: 3 });
    expectContiguous(resumed, 4);
    expect(resumed).toEqual(finishedEvents.slice(3));
    const past = await collectEvents(server, finishedId, { lastEventId: 10_000 });
    expect(past).toEqual([]);
  });

  it("refuses bad run requests with the property named", async () => {
    const cases: Array<[Record<string, unknown>, number, string, string]> = [
      [{}, 400, "invalid_request", "goal"],
      [{ goal: "x", profil: "Coder" }, 400, "invalid_request", "profil"],
      [{ goal: "x", profile: "Hacker", model: server.script([]) }, 400, "unknown_profile", "profile"],
      [{ goal: "x", model: "nonsense:model" }, 400, "unknown_provider", "model"],
      [{ goal: "x", maxSteps: 0, model: server.script([]) }, 400, "invalid_request", "maxSteps"],
      [{ goal: "x", model: "scripted:/no/such/file.json" }, 400, "", "model"],
    ];
    for (const [body, status, code, property] of cases) {
      const response = await server.api("/runs", { body });
      const json = (await response.json()) as ErrorJson;
      expect(response.status, JSON.stringify(json)).toBe(status);
      if (code) expect(json.error.code).toBe(code);
      expect(json.error.property).toBe(property);
    }
    // The message says what was not valid, in a sentence.
    const misspelled = (await (
      await server.api("/runs", { body: { goal: "x", profil: "Coder" } })
    ).json()) as ErrorJson;
    expect(misspelled.error.message).toMatch(/^The \/runs body is not valid: `profil` /);
    const call = (await (await server.api("/tools/call", { body: { tol: "fs.read" } })).json()) as ErrorJson;
    expect(call.error.message).toMatch(/^The \/tools\/call body is not valid: `tol` /);
    const missing = await server.api("/runs/20990101-000000-nosuch");
    expect(missing.status).toBe(404);
    const invalid = await server.api("/runs/..%2F..%2Fetc");
    expect(invalid.status).toBe(400);
    const events = await server.api("/runs/20990101-000000-nosuch/events");
    expect(events.status).toBe(404);
  });
});

describe("approvals", () => {
  it("parks a request until it is answered; the run goes on live after approval", async () => {
    const id = await startRun({
      goal: "write approved.txt",
      profile: "Coder",
      approval: "on-risk",
      model: server.script(finishingScript("approved.txt")),
    });
    const answered: string[] = [];
    const events = await collectEvents(server, id, {
      onEvent: async (event) => {
        if (event.type !== "approval_requested") return;
        // Visible as pending on the run, then answered.
        const run = await getRun(id);
        expect(run.pendingApprovals.map((p) => p.approvalId)).toContain(event.approvalId);
        const response = await server.api(`/runs/${id}/approvals/${event.approvalId}`, {
          body: { approve: true },
        });
        expect(response.status).toBe(200);
        answered.push(String(event.approvalId));
      },
    });
    // fs.write and the verify command each asked.
    expect(answered).toHaveLength(2);
    const resolved = events.filter((e) => e.type === "approval_resolved");
    expect(resolved.map((e) => e.approved)).toEqual([true, true]);
    expect(events.at(-1)).toMatchObject({ type: "run_ended", outcome: "finished" });
    expectContiguous(events);
    expect((await getRun(id)).pendingApprovals).toEqual([]);
  }, 30_000);

  it("a denied approval is a refused tool call the run sees, and answering twice is refused (409)", async () => {
    const id = await startRun({
      goal: "try to write denied.txt",
      profile: "Coder",
      approval: "always",
      model: server.script([
        action("capability_call", { tool: "fs.write", arguments: { path: "denied.txt", content: "x" } }),
        action("mark_impossible", { reason: "the operator said no" }),
      ]),
    });
    let approvalId = "";
    const events = await collectEvents(server, id, {
      onEvent: async (event) => {
        if (event.type !== "approval_requested") return;
        approvalId = String(event.approvalId);
        const response = await server.api(`/runs/${id}/approvals/${approvalId}`, {
          body: { approve: false },
        });
        expect(response.status).toBe(200);
      },
    });
    const result = events.find((e) => e.type === "tool_result");
    expect(result).toMatchObject({ tool: "fs.write", success: false, rejected: "policy_denied" });
    expect(events.at(-1)).toMatchObject({ type: "run_ended", outcome: "impossible" });
    const again = await server.api(`/runs/${id}/approvals/${approvalId}`, { body: { approve: true } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as ErrorJson).error).toMatchObject({
      code: "approval_already_answered",
      property: "approvalId",
    });
    const unknown = await server.api(`/runs/${id}/approvals/no-such-approval`, { body: { approve: true } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ErrorJson).error.code).toBe("approval_not_found");
    const badBody = await server.api(`/runs/${id}/approvals/${approvalId}`, { body: { approve: "yes" } });
    expect(badBody.status).toBe(400);
  }, 30_000);
});

describe("approvals bound to the call", () => {
  const errorSchema = JSON.parse(
    readFileSync(new URL("../schemas/error.schema.json", import.meta.url), "utf8"),
  ) as JsonSchema;

  it("an answer with another argumentsHash is 409 and approves nothing; scope run allows later calls of that tool, recorded with who decided", async () => {
    const id = await startRun({
      goal: "write three files",
      profile: "Coder",
      approval: "always",
      model: server.script([
        action("capability_call", { tool: "fs.write", arguments: { path: "one.txt", content: "1" } }),
        action("capability_call", { tool: "fs.write", arguments: { path: "two.txt", content: "2" } }),
        action("capability_call", { tool: "fs.read", arguments: { path: "two.txt" } }),
        action("mark_impossible", { reason: "done" }),
      ]),
    });
    const statuses: Array<[string, number, string?]> = [];
    const events = await collectEvents(server, id, {
      onEvent: async (event) => {
        if (event.type !== "approval_requested") return;
        const url = `/runs/${id}/approvals/${event.approvalId}`;
        const [pending] = (await getRun(id)).pendingApprovals as Array<{
          argumentsHash: string;
          expiresAt: string;
        }>;
        expect(pending?.argumentsHash).toBe(event.argumentsHash);
        expect(pending?.expiresAt).toBe(event.expiresAt);
        const wrong = await server.api(url, { body: { approve: true, argumentsHash: "0".repeat(64) } });
        const body = (await wrong.json()) as ErrorJson;
        const verdict = validate(errorSchema, body);
        expect(verdict.ok ? [] : verdict.errors).toEqual([]);
        statuses.push([String(event.tool), wrong.status, body.error.code]);
        expect(body.error.property).toBe("argumentsHash");
        const right = await server.api(url, {
          body: {
            approve: true,
            argumentsHash: event.argumentsHash,
            ...(event.tool === "fs.write" ? { scope: "run" } : {}),
          },
        });
        statuses.push([String(event.tool), right.status]);
      },
    });
    expect(statuses).toEqual([
      ["fs.write", 409, "approval_arguments_mismatch"],
      ["fs.write", 200],
      ["fs.read", 409, "approval_arguments_mismatch"],
      ["fs.read", 200],
    ]);
    const requested = events.filter((e) => e.type === "approval_requested");
    expect(requested.map((e) => e.tool)).toEqual(["fs.write", "fs.read"]);
    const resolved = events.filter((e) => e.type === "approval_resolved");
    const grantId = requested[0]?.approvalId;
    expect(resolved.map((e) => [e.tool, e.scope, e.decidedBy])).toEqual([
      ["fs.write", "run", expect.stringMatching(/^api:[A-Za-z0-9_-]{22}$/)],
      ["fs.write", "run", `grant:${grantId}`],
      ["fs.read", "once", expect.stringMatching(/^api:/)],
    ]);
    const results = events.filter((e) => e.type === "tool_result");
    expect(results.map((e) => e.success)).toEqual([true, true, true]);
    const badScope = await server.api(`/runs/${id}/approvals/x`, { body: { approve: false, scope: "run" } });
    expect(badScope.status).toBe(400);
    expect(((await badScope.json()) as ErrorJson).error.property).toBe("scope");
  }, 30_000);
});

describe("concurrency limit, queue and disconnects", () => {
  it("queues a run beyond the limit, survives a client that disconnects mid-stream, and leaks no stream", async () => {
    // Run A parks on its approval and holds the only slot.
    const a = await startRun({
      goal: "hold the slot",
      profile: "Coder",
      approval: "always",
      model: server.script([
        action("capability_call", { tool: "fs.write", arguments: { path: "slot.txt", content: "x" } }),
        action("mark_impossible", { reason: "done holding" }),
      ]),
    });
    const pending = await waitFor(async () => (await getRun(a)).pendingApprovals[0], "run A's approval");

    const b = await startRun({
      goal: "wait in line",
      profile: "Coder",
      model: server.script(finishingScript("queued.txt")),
    });
    expect((await getRun(b)).status).toBe("queued");
    const listed = (await (await server.api("/runs")).json()) as RunJson[];
    expect(listed.find((r) => r.id === b)?.status).toBe("queued");

    // A client reads A's stream, then goes away mid-stream.
    const controller = new AbortController();
    const response = await fetch(`${server.url}/runs/${a}/events`, {
      headers: { authorization: `Bearer ${server.token}` },
      signal: controller.signal,
    });
    const first = await readSse(response).next();
    expect(JSON.parse(first.value?.data ?? "{}")).toMatchObject({ type: "run_started", seq: 1 });
    controller.abort();
    await waitFor(async () => {
      const status = (await (await server.api("/status")).json()) as { streams: number };
      return status.streams === 0 ? true : undefined;
    }, "the dropped stream to be released");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    // Follow B from the queue while A is released.
    const bEvents = collectEvents(server, b);
    const answer = await server.api(`/runs/${a}/approvals/${pending.approvalId}`, {
      body: { approve: true },
    });
    expect(answer.status).toBe(200);
    const events = await bEvents;
    expect(events.at(-1)).toMatchObject({ type: "run_ended", outcome: "finished" });
    expectContiguous(events);
    expect((await getRun(a)).outcome).toBe("impossible");
    const status = (await (await server.api("/status")).json()) as {
      streams: number;
      runs: { running: number; queued: number };
    };
    expect(status.runs).toEqual({ running: 0, queued: 0 });
  }, 40_000);

  it("sends heartbeats on an idle stream", async () => {
    const id = await startRun({
      goal: "idle",
      profile: "Coder",
      approval: "always",
      model: server.script([
        action("capability_call", { tool: "fs.write", arguments: { path: "idle.txt", content: "x" } }),
        action("mark_impossible", { reason: "idle done" }),
      ]),
    });
    const pending = await waitFor(async () => (await getRun(id)).pendingApprovals[0], "the approval");
    const response = await server.api(`/runs/${id}/events`);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes(": keep-alive")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    expect(text).toContain(": keep-alive");
    await server.api(`/runs/${id}/approvals/${pending.approvalId}`, { body: { approve: false } });
  }, 30_000);
});
