import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createScriptedModel } from "@capgate/models";
import { shellForTests } from "@capgate/test-system-parts";
import { describe, expect, it } from "vitest";
import type { ApprovalAnswer, ApprovalResolution } from "./approval-registry.js";
import type { RunEvent } from "./events.js";
import { runGoal } from "./goal-loop.js";
import { MemoryApprovalRegistry } from "./memory-approvals.js";
import { act, makeEnv } from "./test-support/env.js";

type Requested = Extract<RunEvent, { type: "approval_requested" }>;
type Resolved = Extract<RunEvent, { type: "approval_resolved" }>;

const write = (path: string, text = "x") =>
  act("capability_call", { tool: "notes.write", arguments: { path, text } });
const read = (path: string) => act("capability_call", { tool: "notes.read", arguments: { path } });

/**
 * A run whose approvals wait in `registry`; `answer` is called for each approval_requested
 * (after the hook has parked it) and its resolutions are kept in order.
 */
async function runWith(
  registry: MemoryApprovalRegistry,
  actions: string[],
  answer: (e: Requested, resolve: (a: ApprovalAnswer) => Promise<ApprovalResolution>) => Promise<void>,
  setup = makeEnv({ policy: { approval: "always", shell: shellForTests() }, approve: registry.hook }),
) {
  const { env, workspace } = setup;
  const seen: RunEvent[] = [];
  const answering: Promise<void>[] = [];
  const result = await runGoal(env, {
    goal: "g",
    profile: "Orchestrator",
    model: createScriptedModel([
      act("capability_load", { name: "notes" }),
      ...actions,
      act("mark_impossible", { reason: "done" }),
    ]),
    workspace,
    onEvent: (e) => {
      seen.push(e);
      if (e.type !== "approval_requested") return;
      answering.push(
        new Promise<void>((done) => setImmediate(done)).then(() =>
          answer(e, (a) => registry.resolve(e.runId ?? result.runId, e.approvalId, a)),
        ),
      );
    },
  });
  await Promise.all(answering);
  const requested = seen.filter((e): e is Requested => e.type === "approval_requested");
  const resolved = seen.filter((e): e is Resolved => e.type === "approval_resolved");
  const results = seen.filter((e) => e.type === "tool_result" && e.tool.startsWith("notes."));
  return { ...setup, result, seen, requested, resolved, results };
}

const yes = (e: Requested, scope: "once" | "run" = "once"): ApprovalAnswer => ({
  approve: true,
  scope,
  argumentsHash: e.argumentsHash,
  decidedBy: "test",
});

describe("an approval binds to the call it was asked for", () => {
  it("the request names the tool, the run, the SHA-256 of the canonical arguments and when it expires", async () => {
    const registry = new MemoryApprovalRegistry({ timeoutMs: 60_000 });
    const run = await runWith(registry, [write("a.txt", "hello")], async (e, resolve) => {
      expect((await resolve(yes(e))).ok).toBe(true);
    });
    const [req] = run.requested;
    const canonical = '{"path":"a.txt","text":"hello"}';
    expect(req).toMatchObject({
      tool: "notes.write",
      runId: run.result.runId,
      argumentsHash: createHash("sha256").update(canonical).digest("hex"),
    });
    expect(Date.parse(req?.expiresAt ?? "") - Date.parse(req?.time ?? "")).toBeGreaterThan(59_000);
    expect(run.resolved[0]).toMatchObject({
      approved: true,
      scope: "once",
      decidedBy: "test",
      tool: "notes.write",
    });
    expect(readFileSync(join(run.workspace, "a.txt"), "utf8")).toBe("hello");
  });

  it("an answer naming other arguments approves nothing; the request stays pending for a real answer", async () => {
    const registry = new MemoryApprovalRegistry();
    const refusals: ApprovalResolution[] = [];
    const run = await runWith(registry, [write("a.txt")], async (e, resolve) => {
      const other = createHash("sha256").update('{"path":"b.txt","text":"x"}').digest("hex");
      refusals.push(await resolve({ approve: true, argumentsHash: other, decidedBy: "test" }));
      expect((await registry.pendingFor(e.runId ?? "")).map((p) => p.approvalId)).toEqual([e.approvalId]);
      refusals.push(await resolve({ approve: false, argumentsHash: e.argumentsHash, decidedBy: "test" }));
    });
    expect(refusals[0]).toMatchObject({ ok: false, refused: "arguments_mismatch" });
    expect(refusals[0]?.ok === false && refusals[0].message).toContain("nothing was approved");
    expect(refusals[1]?.ok).toBe(true);
    expect(run.resolved.map((r) => r.approved)).toEqual([false]);
    expect(existsSync(join(run.workspace, "a.txt"))).toBe(false);
  });

  it("answers once: a replayed answer is refused, and an approval allows that one call — the same call again asks again", async () => {
    const registry = new MemoryApprovalRegistry();
    const replays: ApprovalResolution[] = [];
    let first: Requested | undefined;
    const run = await runWith(registry, [write("a.txt"), write("a.txt")], async (e, resolve) => {
      if (!first) {
        first = e;
        expect((await resolve(yes(e))).ok).toBe(true);
        replays.push(await resolve(yes(e)));
        return;
      }
      // The second, identical call: the first approval's id answers nothing here.
      replays.push(await registry.resolve(first.runId ?? "", first.approvalId, yes(first)));
      expect(await registry.pendingFor(e.runId ?? "")).toHaveLength(1);
      expect((await resolve({ approve: false, decidedBy: "test" })).ok).toBe(true);
    });
    expect(run.requested).toHaveLength(2);
    expect(run.requested[0]?.argumentsHash).toBe(run.requested[1]?.argumentsHash);
    expect(replays.map((r) => !r.ok && r.refused)).toEqual(["already_answered", "already_answered"]);
    expect(run.resolved.map((r) => r.approved)).toEqual([true, false]);
    expect(run.results.map((r) => r.type === "tool_result" && r.success)).toEqual([true, false]);
  });

  it("an answer after expiresAt is refused and the call denied, even before the timer fires", async () => {
    let now = Date.now();
    const registry = new MemoryApprovalRegistry({ timeoutMs: 60_000, now: () => now });
    let late: ApprovalResolution | undefined;
    const run = await runWith(registry, [write("a.txt")], async (e, resolve) => {
      now = Date.parse(e.expiresAt ?? "") + 1;
      late = await resolve(yes(e));
    });
    expect(late).toMatchObject({ ok: false, refused: "expired" });
    expect(run.resolved[0]).toMatchObject({ approved: false, decidedBy: "timeout" });
    expect(existsSync(join(run.workspace, "a.txt"))).toBe(false);
  });

  it("a request nobody answers expires: the trace says `timeout`, and a later answer is refused as expired", async () => {
    const registry = new MemoryApprovalRegistry({ timeoutMs: 1 });
    let requested: Requested | undefined;
    const run = await runWith(registry, [write("a.txt")], async (e) => {
      requested = e;
    });
    expect(run.resolved[0]).toMatchObject({ approved: false, decidedBy: "timeout" });
    const late = await registry.resolve(run.result.runId, requested?.approvalId ?? "", yes(requested!));
    expect(late).toMatchObject({ ok: false, refused: "expired" });
    expect(existsSync(join(run.workspace, "a.txt"))).toBe(false);
  });
});

describe("allow for the rest of the run", () => {
  it("a `run` answer allows later calls of that tool only, recorded as allowed by that approval's grant; another run asks again", async () => {
    const registry = new MemoryApprovalRegistry();
    const asked: string[] = [];
    const answer = async (e: Requested, resolve: (a: ApprovalAnswer) => Promise<ApprovalResolution>) => {
      asked.push(e.tool);
      expect((await resolve(yes(e, e.tool === "notes.write" ? "run" : "once"))).ok).toBe(true);
    };
    const run = await runWith(
      registry,
      [write("a.txt"), write("b.txt", "other"), read("a.txt"), read("a.txt")],
      answer,
    );
    // notes.write asked once; notes.read (another tool, once) asked each time.
    expect(asked).toEqual(["notes.write", "notes.read", "notes.read"]);
    const grantId = run.requested[0]?.approvalId;
    expect(run.resolved[0]).toMatchObject({
      approvalId: grantId,
      approved: true,
      scope: "run",
      decidedBy: "test",
    });
    const byGrant = run.resolved.filter((r) => r.decidedBy === `grant:${grantId}`);
    expect(byGrant).toHaveLength(1);
    expect(byGrant[0]).toMatchObject({ approved: true, tool: "notes.write", scope: "run" });
    expect(byGrant[0]?.argumentsHash).toBe(
      createHash("sha256").update('{"path":"b.txt","text":"other"}').digest("hex"),
    );
    expect(readFileSync(join(run.workspace, "b.txt"), "utf8")).toBe("other");
    expect(run.results.every((r) => r.type === "tool_result" && r.success)).toBe(true);

    // The same environment, a new run: the grant stayed with the run that made it.
    asked.length = 0;
    const next = await runWith(registry, [write("c.txt")], answer, { ...run, env: run.env });
    expect(asked).toEqual(["notes.write"]);
    expect(next.resolved.some((r) => r.decidedBy?.startsWith("grant:"))).toBe(false);
  });

  it("a grant covers its own tool only, not another of the same capability", async () => {
    const registry = new MemoryApprovalRegistry();
    const asked: string[] = [];
    const run = await runWith(
      registry,
      [act("capability_call", { tool: "notes.read", arguments: { path: "x" } }), write("a.txt")],
      async (e, resolve) => {
        asked.push(e.tool);
        expect((await resolve(yes(e, "run"))).ok).toBe(true);
      },
    );
    // A grant of notes.read is not one of notes.write.
    expect(asked).toEqual(["notes.read", "notes.write"]);
    expect(run.requested).toHaveLength(2);
  });
});
