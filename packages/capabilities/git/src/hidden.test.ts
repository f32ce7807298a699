import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolContext } from "@capgate/tools";
import { afterEach, describe, expect, it } from "vitest";
import { createRepoWithHistory, type GitTestRepo } from "./test-support.js";

// A workspace that holds the state dir (or a home): the git tools keep the sandbox's hide
// list out — a path argument naming it is refused, and whole-tree calls neither list nor
// stage it.

const open: GitTestRepo[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

function setup(): { repo: GitTestRepo; over: Partial<ToolContext> } {
  const repo = createRepoWithHistory();
  open.push(repo);
  mkdirSync(join(repo.workspace, "state", "runs"), { recursive: true });
  writeFileSync(join(repo.workspace, "state", "runs", "r1.jsonl"), "TRACE-SECRET\n");
  mkdirSync(join(repo.workspace, ".ssh"));
  writeFileSync(join(repo.workspace, ".ssh", "id_rsa"), "KEY-SECRET\n");
  writeFileSync(join(repo.workspace, "visible.txt"), "new\n");
  return {
    repo,
    over: { stateDir: join(repo.workspace, "state"), env: { ...repo.env, HOME: repo.workspace } },
  };
}

describe("git tools and the hide list", { timeout: 60_000 }, () => {
  it.each([
    ["git.add", { paths: ["state/runs/r1.jsonl"] }, "paths[0]", "state"],
    ["git.add", { paths: [".ssh"] }, "paths[0]", ".ssh"],
    ["git.diff", { path: ".ssh/id_rsa" }, "path", ".ssh"],
    ["git.log", { path: "state" }, "path", "state"],
  ] as const)("%s %j is refused, naming the hidden directory", async (tool, args, property, hidden) => {
    const { repo, over } = setup();
    const error = await repo.call(tool, args, over).then(
      (r) => new Error(`expected a rejection, got ${JSON.stringify(r)}`),
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "policy_denied", property });
    expect((error as Error).message).toContain(`is inside '${hidden}'`);
  });

  it("git.status does not list them and git.add of the whole tree does not stage them", async () => {
    const { repo, over } = setup();
    const status = await repo.call("git.status", {}, over);
    expect(status.success, status.summary).toBe(true);
    expect(status.summary).toContain("visible.txt");
    expect(status.summary).not.toMatch(/state|\.ssh/);
    const add = await repo.call("git.add", { paths: ["."] }, over);
    expect(add.success, add.summary).toBe(true);
    const staged = repo.git("diff", "--cached", "--name-only");
    expect(staged).toContain("visible.txt");
    expect(staged).not.toMatch(/state|\.ssh/);
  });

  it("without the hide list in play (a plain context) the same tree is listed as it is", async () => {
    const { repo } = setup();
    const status = await repo.call("git.status", {});
    expect(status.summary).toMatch(/state\//);
  });
});
