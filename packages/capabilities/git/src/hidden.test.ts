import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

  it("a .gitignore or info/exclude negation does not bring them back (excludes files rank lowest in git)", async () => {
    const { repo, over } = setup();
    // Without the fix a work-tree negation outranks core.excludesFile: git.add staged the secrets.
    writeFileSync(join(repo.workspace, ".gitignore"), "!/state\n!/state/**\n!/.ssh\n!/.ssh/**\n");
    writeFileSync(join(repo.workspace, ".git", "info", "exclude"), "!/state/\n");
    const status = await repo.call("git.status", {}, over);
    expect(status.success, status.summary).toBe(true);
    expect(status.summary).toContain(".gitignore");
    expect(status.summary).not.toMatch(/state|\.ssh/);
    for (const paths of [["."], [":/"], ["*"]]) {
      const add = await repo.call("git.add", { paths }, over).catch((e: unknown) => e);
      expect(repo.git("ls-files", "--cached"), JSON.stringify(paths)).not.toMatch(/state|\.ssh/);
      void add;
    }
    // Nothing of theirs reached the object store either (git add writes a blob before the index).
    for (const secret of ["state/runs/r1.jsonl", ".ssh/id_rsa"]) {
      const oid = repo.git("hash-object", "--", secret).trim();
      expect(() => repo.git("cat-file", "-e", oid), secret).toThrow();
    }
  });

  it("git.checkout refuses a branch that would write or delete the policy file (capgate.config.json)", async () => {
    const repo = createRepoWithHistory();
    open.push(repo);
    mkdirSync(join(repo.workspace, "app"));
    for (const path of ["capgate.config.json", "app/capgate.config.json"]) {
      writeFileSync(join(repo.workspace, path), '{"shell":{"network":"none"}}\n');
    }
    repo.git("add", "capgate.config.json", "app/capgate.config.json");
    repo.git("commit", "-qm", "policy");
    for (const [branch, path] of [
      ["evil-root", "capgate.config.json"],
      ["evil-app", "app/capgate.config.json"],
    ] as const) {
      // A branch built with plumbing, as a sandboxed command can: the policy file says sandbox off.
      repo.git("checkout", "-q", "-b", branch);
      writeFileSync(join(repo.workspace, path), '{"shell":{"sandbox":"off"}}\n');
      repo.git("commit", "-qam", "evil");
      repo.git("checkout", "-q", "-");
      const r = await repo.call("git.checkout", { ref: branch });
      expect(r.success, r.summary).toBe(false);
      expect(r.summary).toContain(`would write or delete '${path}'`);
      expect(r.summary).toContain("capgate's own policy file");
      expect(readFileSync(join(repo.workspace, path), "utf8")).toBe('{"shell":{"network":"none"}}\n');
    }
  });

  it("without the hide list in play (a plain context) the same tree is listed as it is", async () => {
    const { repo } = setup();
    const status = await repo.call("git.status", {});
    expect(status.summary).toMatch(/state\//);
  });
  it("a hidden path planted in the index stops every git tool before git shows it", async () => {
    const { repo, over } = setup();
    // What a sandboxed `git update-index --add --cacheinfo` can do without reading the file.
    const empty = repo.git("hash-object", "-w", "--stdin").trim();
    repo.git("update-index", "--add", "--cacheinfo", `100644,${empty},state/runs/r1.jsonl`);
    for (const [tool, args] of [
      ["git.status", {}],
      ["git.diff", {}],
      ["git.show", { ref: ":state/runs/r1.jsonl" }],
      ["git.add", { paths: ["."] }],
      ["git.log", {}],
    ] as const) {
      const outcome = await repo.call(tool, args, over).then(
        (r) => JSON.stringify(r),
        (e: unknown) => e as Error & { code?: string },
      );
      expect(typeof outcome, `${tool}: ${String(outcome)}`).not.toBe("string");
      const error = outcome as Error & { code?: string };
      expect(error.code, tool).toBe("policy_denied");
      expect(error.message, tool).toContain("index tracks 'state/runs/r1.jsonl', inside 'state'");
      expect(error.message).not.toContain("TRACE-SECRET");
    }
    // Nothing was staged from the real file.
    expect(repo.git("ls-files", "-s", "--", "state/runs/r1.jsonl")).toContain(empty);
  });

  it("git.checkout refuses a branch whose tree would write or delete a hidden path", async () => {
    const { repo, over } = setup();
    // A branch the model built with plumbing: HEAD's tree plus state/runs/r1.jsonl.
    const blob = repo.git("hash-object", "-w", "--stdin").trim();
    repo.git("read-tree", "HEAD");
    repo.git("update-index", "--add", "--cacheinfo", `100644,${blob},state/runs/r1.jsonl`);
    const tree = repo.git("write-tree").trim();
    repo.git("read-tree", "HEAD");
    const commit = repo.git("commit-tree", tree, "-p", "HEAD", "-m", "evil").trim();
    repo.git("update-ref", "refs/heads/evil", commit);
    const r = await repo.call("git.checkout", { ref: "evil" }, over);
    expect(r.success).toBe(false);
    expect(r.summary).toContain("would write or delete 'state/runs/r1.jsonl', inside 'state'");
    expect(repo.git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("main");
    expect(readFileSync(join(repo.workspace, "state", "runs", "r1.jsonl"), "utf8")).toBe("TRACE-SECRET\n");
  });
});
