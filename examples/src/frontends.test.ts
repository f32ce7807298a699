import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { needs, shellForTests } from "@capgate/test-system-parts";
import { afterAll, describe, expect, it } from "vitest";
import { type Frontend, startFrontend } from "./http-frontend.js";
import { runTerminalDemo } from "./terminal-demo.js";

const bwrap = needs(["bwrap"]);
const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-examples-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const action = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

/** The SSE stream of a run until it ends: its events, in order. */
async function follow(frontend: Frontend, id: string): Promise<Array<{ type: string; seq: number }>> {
  const res = await fetch(`${frontend.url}/runs/${id}/events`, {
    headers: { authorization: `Bearer ${frontend.token}` },
  });
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const text = await res.text(); // the stream ends after run_ended
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice("data: ".length)) as { type: string; seq: number });
}

describe("examples/http-frontend: a second frontend on @capgate/host alone", () => {
  it("starts a run, follows its events to the end, lists and shows it — and guards like the server", async () => {
    const workspace = join(root, "ws");
    const models = join(root, "models");
    for (const dir of [workspace, models]) mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(models, "quick.json"),
      JSON.stringify([
        action("capability_search", { query: "read files" }),
        action("verify", { claim: "the workspace is there", command: "test -d ." }),
        action("finish", { summary: "nothing to change" }),
      ]),
    );
    const frontend = await startFrontend({
      workspace,
      stateDir: join(root, "state"),
      config: {},
      scriptedModelsDir: models,
      env: {},
    });
    const auth = { authorization: `Bearer ${frontend.token}`, "content-type": "application/json" };
    try {
      expect((await fetch(`${frontend.url}/runs`)).status).toBe(401);
      const rebinding = await fetch(`${frontend.url}/runs`, {
        headers: { ...auth, origin: "http://evil.example" },
      });
      expect(rebinding.status).toBe(403);

      const bad = await fetch(`${frontend.url}/runs`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ gaol: "typo" }),
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_request");

      const started = await fetch(`${frontend.url}/runs`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ goal: "look around", model: "scripted:quick.json" }),
      });
      expect(started.status).toBe(202);
      const { id } = (await started.json()) as { id: string };

      const events = await follow(frontend, id);
      expect(events[0]?.type).toBe("run_started");
      expect(events.at(-1)).toMatchObject({ type: "run_ended", outcome: "finished" });
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

      const shown = await fetch(`${frontend.url}/runs/${id}`, { headers: auth });
      expect(await shown.json()).toMatchObject({ id, status: "ended", outcome: "finished" });
      const listed = (await (await fetch(`${frontend.url}/runs`, { headers: auth })).json()) as Array<{
        id: string;
      }>;
      expect(listed.map((r) => r.id)).toContain(id);
      // A malformed id names no run: the store checks it before it builds a path.
      expect((await fetch(`${frontend.url}/runs/..%2Fetc`, { headers: auth })).status).toBe(404);
    } finally {
      await frontend.close();
    }
  });
});

describe("examples/terminal-demo: the offline demo as a terminal frontend", () => {
  it("prints one line per event and finishes with the fix verified", async () => {
    const lines: string[] = [];
    const outcome = await runTerminalDemo((line) => lines.push(line), {
      stateDir: join(root, "demo-state"),
      config: { shell: shellForTests() },
      env: {},
    });
    expect(outcome).toBe("finished");
    expect(lines.some((l) => l.startsWith("✔ verify passed"))).toBe(true);
    expect(lines.at(-1)).toBe("math.js now adds; the tests pass.");
  });

  // The README's `pnpm --filter @capgate/examples terminal`: under tsx, whose require hook
  // once broke the lazy load of the process runner (the verify step could start nothing).
  it.skipIf(bwrap.skip)(`runs as its own process under tsx, as documented${bwrap.note}`, () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/terminal-demo.ts"], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: { PATH: process.env.PATH, HOME: root, CAPGATE_HOME: join(root, "tsx-state"), LANG: "C.UTF-8" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.stderr).not.toContain("Error");
    expect(run.stdout).toContain("✔ verify passed");
    expect(run.stdout).toContain("run ended finished");
    expect(run.status).toBe(0);
  });
});
