import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { historyProblems, newGitlinks } from "./gitlinks.js";
import { trustedRepoGit } from "./runners.js";

const gitPart = needs(["git"]);

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const env = {
  PATH: process.env.PATH,
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
};

function repo() {
  const dir = mkdtempSync(join(tmpdir(), "capgate-gitlinks-"));
  roots.push(dir);
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: dir, env, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] }).trim();
  const input = (text: string, ...args: string[]) =>
    execFileSync("git", args, { cwd: dir, env, input: text, encoding: "utf8" }).trim();
  git("init", "-q", "-b", "main");
  writeFileSync(join(dir, "a"), "a\n");
  git("add", "a");
  git("commit", "-q", "-m", "a");
  const head = git("rev-parse", "HEAD");
  return { dir, git, input, head, runner: trustedRepoGit({ cwd: dir, env, timeoutMs: 30_000 }) };
}

describe.skipIf(gitPart.skip)(`gitlinks${gitPart.note}`, () => {
  it("newGitlinks: index gitlinks the base lacks, or holds at another commit; the base's own unchanged ones pass", async () => {
    const r = repo();
    r.git("update-index", "--add", "--cacheinfo", `160000,${r.head},mine`);
    r.git("commit", "-q", "-m", "the user's submodule");
    const base = r.git("rev-parse", "HEAD");
    expect(await newGitlinks(r.runner, base)).toEqual([]);
    r.git("update-index", "--add", "--cacheinfo", `160000,${base},new`);
    r.git("update-index", "--cacheinfo", `160000,${base},mine`);
    expect(await newGitlinks(r.runner, base)).toEqual([
      { path: "mine", oid: base },
      { path: "new", oid: base },
    ]);
    // With no base every gitlink is new.
    expect((await newGitlinks(r.runner, undefined)).map((g) => g.path)).toEqual(["mine", "new"]);
  });

  it("historyProblems: a gitlink added or moved in any commit of the range, through a merge too; a base gitlink kept or removed is fine", async () => {
    const r = repo();
    r.git("update-index", "--add", "--cacheinfo", `160000,${r.head},mine`);
    r.git("commit", "-q", "-m", "the user's submodule");
    const base = r.git("rev-parse", "HEAD");
    writeFileSync(join(r.dir, "b"), "b\n");
    r.git("add", "b");
    r.git("commit", "-q", "-m", "plain");
    expect(await historyProblems(r.runner, base, r.git("rev-parse", "HEAD"))).toEqual([]);
    r.git("rm", "-q", "--cached", "mine");
    r.git("commit", "-q", "-m", "drop the submodule");
    expect(await historyProblems(r.runner, base, r.git("rev-parse", "HEAD"))).toEqual([]);
    // A side branch adds a gitlink; merged, the merge brings it relative to its first parent.
    r.git("checkout", "-q", "-b", "side", base);
    r.git("update-index", "--add", "--cacheinfo", `160000,${base},side-link`);
    r.git("commit", "-q", "-m", "side gitlink");
    const sideLink = r.git("rev-parse", "HEAD");
    r.git("update-index", "--force-remove", "side-link");
    r.git("commit", "-q", "-m", "side removes it again");
    r.git("checkout", "-q", "main");
    r.git("merge", "-q", "--no-edit", "side");
    const problems = await historyProblems(r.runner, base, r.git("rev-parse", "HEAD"));
    expect(problems).toEqual([{ commit: sideLink, path: "side-link", why: "gitlink" }]);
    // A base gitlink moved to another commit is a new one.
    r.git("update-index", "--add", "--cacheinfo", `160000,${sideLink},mine`);
    r.git("commit", "-q", "-m", "move it");
    const moved = r.git("rev-parse", "HEAD");
    expect(await historyProblems(r.runner, base, moved)).toContainEqual({
      commit: moved,
      path: "mine",
      why: "gitlink",
    });
  });

  it("historyProblems: a crafted tree with a .git path (any case), and a root commit judged against nothing", async () => {
    const r = repo();
    const blob = r.input("[core]\n", "hash-object", "-w", "--stdin");
    const inner = r.input(`100644 blob ${blob}\tconfig\n`, "mktree");
    const top = r.input(`040000 tree ${inner}\tsub\n`, "mktree");
    const nested = r.input(`040000 tree ${inner}\t.GIT\n`, "mktree");
    const both = r.input(`040000 tree ${nested}\tsub\n`, "mktree");
    const crafted = r.git("commit-tree", both, "-p", r.head, "-m", "crafted");
    expect(await historyProblems(r.runner, r.head, crafted)).toEqual([
      { commit: crafted, path: "sub/.GIT/config", why: "dotgit" },
    ]);
    const plain = r.git("commit-tree", top, "-m", "root");
    expect(await historyProblems(r.runner, undefined, plain)).toEqual([]);
    await expect(historyProblems(r.runner, undefined, "HEAD")).rejects.toThrow(/not an object id/);
  });
});
