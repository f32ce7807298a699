import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import type { RepoStatus } from "./status.js";
import { createRepo, createRepoWithHistory, type GitTestRepo } from "./test-support.js";

// These drive real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);
const describeGit = (name: string, body: () => void) =>
  describe.skipIf(gitPart.skip)(name + gitPart.note, body);

let repo: GitTestRepo;
afterEach(() => repo?.close());

describeGit("git.status", () => {
  it("shows the branch and short-format entries with counts", async () => {
    repo = createRepoWithHistory();
    repo.write("src/app.ts", "export const answer = 42;\n");
    repo.write("src/new.ts", "new\n");
    repo.git("add", "src/new.ts");
    repo.write("notes.txt", "todo\n");
    repo.write("dir with space/file name.txt", "x\n");
    const r = await repo.call("git.status");
    expect(r.success).toBe(true);
    expect(r.summary).toBe(
      [
        "On branch main",
        " M src/app.ts",
        "A  src/new.ts",
        "?? dir with space/",
        "?? notes.txt",
        "1 staged, 1 unstaged, 2 untracked.",
      ].join("\n"),
    );
    const data = r.data as RepoStatus;
    expect(data).toMatchObject({ branch: "main", detached: false, staged: 1, unstaged: 1, untracked: 2 });
    expect(data.head).toMatch(/^[0-9a-f]{40}$/);
  });

  it("a clean tree, a fresh repository, renames", async () => {
    repo = createRepo();
    expect((await repo.call("git.status")).summary).toBe(
      "On branch main — no commits yet\nNothing to commit, working tree clean.",
    );
    repo.write("a.txt", "alpha\nbeta\ngamma\n");
    repo.git("add", "a.txt");
    repo.git("commit", "-q", "-m", "a");
    expect((await repo.call("git.status")).summary).toBe(
      "On branch main\nNothing to commit, working tree clean.",
    );
    repo.git("mv", "a.txt", "b.txt");
    expect((await repo.call("git.status")).summary).toContain("R  a.txt -> b.txt");
  });

  it("detached HEAD", async () => {
    repo = createRepoWithHistory();
    const first = repo.git("rev-parse", "HEAD~1").trim();
    repo.git("checkout", "-q", "--detach", first);
    const r = await repo.call("git.status");
    expect(r.summary).toMatch(new RegExp(`^HEAD detached at ${first.slice(0, 7)}\n`));
    expect(r.data).toMatchObject({ detached: true, branch: null, head: first });
  });
});

describeGit("git.diff", () => {
  it("unstaged vs staged, each with a stat header", async () => {
    repo = createRepoWithHistory();
    repo.write("src/app.ts", "export const answer = 42;\n");
    repo.write("README.md", "# demo\n\nMore.\n");
    repo.git("add", "README.md");

    const unstaged = await repo.call("git.diff");
    expect(unstaged.summary).toMatch(/^Unstaged changes \(working tree vs index\): 1 file, \+1 -1\n/);
    expect(unstaged.summary).toContain(" src/app.ts | 2 +-");
    expect(unstaged.summary).toContain("+export const answer = 42;");
    expect(unstaged.summary).not.toContain("More.");

    const staged = await repo.call("git.diff", { staged: true });
    expect(staged.summary).toMatch(/^Staged changes \(index vs HEAD\): 1 file, \+2 -0\n/);
    expect(staged.summary).toContain("+More.");
    expect(staged.summary).not.toContain("answer = 42");
    expect(staged.data).toMatchObject({ staged: true, files: [{ path: "README.md", added: 2, deleted: 0 }] });
  });

  it("limits to a path, and says what to do when there is nothing", async () => {
    repo = createRepoWithHistory();
    repo.write("src/app.ts", "changed\n");
    const onlyReadme = await repo.call("git.diff", { path: "README.md" });
    expect(onlyReadme.summary).toMatch(/^No unstaged changes under README.md/);
    const onlySrc = await repo.call("git.diff", { path: "src" });
    expect(onlySrc.summary).toContain("+changed");

    repo.git("add", "src/app.ts");
    const none = await repo.call("git.diff");
    expect(none.summary).toContain('There are staged changes: git.diff {"staged": true} shows them.');
    repo.git("commit", "-q", "-m", "c");
    expect((await repo.call("git.diff", { staged: true })).summary).toMatch(/^No staged changes/);
  });

  it("a big diff stays within the output limit with its header", async () => {
    repo = createRepoWithHistory();
    repo.write("big.txt", "");
    repo.git("add", "big.txt");
    repo.write("big.txt", Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n"));
    const r = await repo.call("git.diff", {}, { limits: { ...repo.ctx.limits, outputBytes: 4_096 } });
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(4_096);
    expect(r.summary).toMatch(/^Unstaged changes .*: 1 file, \+20000 -0\n big.txt \| 20000/);
    expect(r.summary.match(/bytes truncated/g)).toHaveLength(1);
  });
});

describeGit("git.log", () => {
  it("one line per commit, newest first, limit and path", async () => {
    repo = createRepoWithHistory();
    const r = await repo.call("git.log");
    const lines = r.summary.split("\n");
    expect(lines[0]).toBe("2 commits, newest first:");
    expect(lines[1]).toMatch(/^[0-9a-f]{7} \d{4}-\d\d-\d\d Test Author: Add app$/);
    expect(lines[2]).toMatch(/: Add readme$/);

    const one = await repo.call("git.log", { limit: 1 });
    expect(one.summary).toContain("Add app");
    expect(one.summary).not.toContain("Add readme");
    expect(one.summary).toContain("more commits exist");

    const readme = await repo.call("git.log", { path: "README.md" });
    expect(readme.summary).toMatch(/^1 commit touching README.md, newest first:\n.*Add readme$/);
  });

  it("a repository without commits is an answer, not an error", async () => {
    repo = createRepo();
    const r = await repo.call("git.log");
    expect(r).toMatchObject({ success: true, summary: expect.stringMatching(/^No commits yet/) });
  });
});

describeGit("git.show", () => {
  it("a commit with message, stat and patch; a file at a revision; unknown refs", async () => {
    repo = createRepoWithHistory();
    repo.write("src/app.ts", "export const answer = 42;\n");
    repo.git("commit", "-q", "-am", "Fix the answer");

    const head = await repo.call("git.show", { ref: "HEAD" });
    expect(head.summary).toMatch(/^commit [0-9a-f]{40}\nAuthor: Test Author <test@example.com>/);
    expect(head.summary).toContain("Fix the answer");
    expect(head.summary).toContain(" src/app.ts | 2 +-");
    expect(head.summary).toContain("-export const answer = 41;");

    const old = await repo.call("git.show", { ref: "HEAD~1:src/app.ts" });
    expect(old.summary).toBe("HEAD~1:src/app.ts (26 bytes):\nexport const answer = 41;\n");

    const tree = await repo.call("git.show", { ref: "HEAD:src" });
    expect(tree.summary).toMatch(/^HEAD:src is a tree/);
    expect(tree.summary).toContain("app.ts");

    const typo = await repo.call("git.show", { ref: "mainn" });
    expect(typo).toMatchObject({ success: false });
    expect(typo.summary).toBe("'mainn' does not name a commit, branch or tag here. Did you mean 'main'?");
    const far = await repo.call("git.show", { ref: "trunk" });
    expect(far.summary).toBe(
      "'trunk' does not name a commit, branch or tag here. Known branches and tags: main.",
    );

    const nofile = await repo.call("git.show", { ref: "HEAD:nope.txt" });
    expect(nofile.success).toBe(false);
    expect(nofile.summary).toMatch(/names no file at that revision/);
  });

  it("a big file at a revision keeps head and tail, and the marker counts what is missing", async () => {
    repo = createRepo();
    const content = Array.from({ length: 5_000 }, (_, i) => `line ${i}`).join("\n");
    repo.write("big.txt", content);
    repo.git("add", "big.txt");
    repo.git("commit", "-q", "-m", "big");
    const r = await repo.call(
      "git.show",
      { ref: "HEAD:big.txt" },
      { limits: { ...repo.ctx.limits, outputBytes: 4_096 } },
    );
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(4_096);
    const header = `HEAD:big.txt (${content.length} bytes):\n`;
    expect(r.summary.startsWith(`${header}line 0\n`)).toBe(true);
    expect(r.summary.endsWith("line 4999")).toBe(true);
    const omitted = Number(/…\[(\d+) bytes truncated\]…/.exec(r.summary)![1]);
    const marker = `\n…[${omitted} bytes truncated]…\n`;
    expect(
      omitted + Buffer.byteLength(r.summary) - Buffer.byteLength(header) - Buffer.byteLength(marker),
    ).toBe(content.length);
  });

  it("a binary file is described, not dumped", async () => {
    repo = createRepo();
    writeFileSync(join(repo.workspace, "blob.bin"), Buffer.from([0, 1, 2, 3, 0, 255]));
    repo.git("add", "blob.bin");
    repo.git("commit", "-q", "-m", "bin");
    const r = await repo.call("git.show", { ref: "HEAD:blob.bin" });
    expect(r.summary).toBe("HEAD:blob.bin: binary file, 6 bytes (not shown).");
  });
});

describeGit("git.add and git.commit", () => {
  it("stages paths, commits them, and reports the new commit", async () => {
    repo = createRepoWithHistory();
    repo.write("src/app.ts", "export const answer = 42;\n");
    repo.write("src/util.ts", "export {};\n");
    repo.write("other.txt", "not staged\n");

    const added = await repo.call("git.add", { paths: ["src"] });
    expect(added.success).toBe(true);
    expect(added.summary).toContain("Staged src.");
    expect(added.summary).toContain("M  src/app.ts");
    expect(added.summary).toContain("A  src/util.ts");
    expect(added.summary).toContain("?? other.txt");

    const committed = await repo.call("git.commit", { message: "Fix the answer\n\nAnd add a util." });
    expect(committed.success).toBe(true);
    expect(committed.summary).toMatch(
      /^Committed [0-9a-f]{7} on main\.\n\[main [0-9a-f]{7}\] Fix the answer\n 2 files changed/,
    );
    expect(repo.git("log", "-1", "--format=%B").trim()).toBe("Fix the answer\n\nAnd add a util.");
    expect(repo.git("status", "--porcelain")).toBe("?? other.txt\n");
  });

  it("add ['.'] stages everything, deletions included", async () => {
    repo = createRepoWithHistory();
    repo.git("rm", "-q", "--cached", "README.md");
    repo.git("commit", "-q", "-m", "untrack");
    repo.write("new.txt", "n\n");
    repo.git("rm", "-q", "src/app.ts");
    repo.git("reset", "-q");
    const r = await repo.call("git.add", { paths: ["."] });
    expect(r.success).toBe(true);
    expect(repo.git("status", "--porcelain")).toBe("A  README.md\nA  new.txt\nD  src/app.ts\n");
  });

  it("add of a path that matches nothing is a clear failure", async () => {
    repo = createRepoWithHistory();
    const r = await repo.call("git.add", { paths: ["nope.txt"] });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/pathspec 'nope.txt' did not match any files/);
  });

  it("commit with nothing staged fails clearly and names what is unstaged", async () => {
    repo = createRepoWithHistory();
    const clean = await repo.call("git.commit", { message: "x" });
    expect(clean).toMatchObject({ success: false });
    expect(clean.summary).toBe(
      "Nothing is staged, so there is nothing to commit. The working tree is clean too.",
    );
    repo.write("src/app.ts", "changed\n");
    const dirty = await repo.call("git.commit", { message: "x" });
    expect(dirty.summary).toMatch(/Changed but not staged: src\/app.ts; stage them with git.add first/);
    expect(repo.git("rev-list", "--count", "HEAD").trim()).toBe("2");
  });

  it("the first commit of a fresh repository works", async () => {
    repo = createRepo();
    repo.write("a.txt", "a\n");
    await repo.call("git.add", { paths: ["a.txt"] });
    const r = await repo.call("git.commit", { message: "root" });
    expect(r.success).toBe(true);
    expect(r.summary).toContain("(root-commit)");
  });

  it("a missing identity is a clear failure naming user.name and user.email, and nothing is committed", async () => {
    repo = createRepo({ identity: false });
    repo.write("a.txt", "a\n");
    await repo.call("git.add", { paths: ["a.txt"] });
    const r = await repo.call("git.commit", { message: "who am i" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/user\.name/);
    expect(r.summary).toMatch(/user\.email/);
    expect(() => repo.git("rev-parse", "--verify", "-q", "HEAD")).toThrow();
    // The host may supply the identity through the environment instead.
    const withEnv = await repo.call(
      "git.commit",
      { message: "now" },
      {
        env: {
          ...repo.env,
          GIT_AUTHOR_NAME: "Env",
          GIT_AUTHOR_EMAIL: "env@example.com",
          GIT_COMMITTER_NAME: "Env",
          GIT_COMMITTER_EMAIL: "env@example.com",
        },
      },
    );
    expect(withEnv.success).toBe(true);
  });
});

describeGit("git.branch and git.checkout", () => {
  it("lists, creates without switching, switches, creates-and-switches", async () => {
    repo = createRepoWithHistory();
    const list = await repo.call("git.branch");
    expect(list.summary).toMatch(/^\* main [0-9a-f]{7} Add app$/);

    const created = await repo.call("git.branch", { name: "feature/x" });
    expect(created.success).toBe(true);
    expect(created.summary).toMatch(/^Created branch 'feature\/x' at [0-9a-f]{7} Add app; still on 'main'/);
    expect(repo.git("branch", "--show-current").trim()).toBe("main");
    expect((await repo.call("git.branch", { name: "feature/x" })).summary).toMatch(/already exists/);

    const switched = await repo.call("git.checkout", { ref: "feature/x" });
    expect(switched.summary).toMatch(/^Switched to branch 'feature\/x' \([0-9a-f]{7} Add app\)\.$/);
    expect(repo.git("branch", "--show-current").trim()).toBe("feature/x");

    const fresh = await repo.call("git.checkout", { ref: "topic", create: true });
    expect(fresh.summary).toMatch(/^Switched to a new branch 'topic'/);
    expect(repo.git("branch", "--show-current").trim()).toBe("topic");
    expect((await repo.call("git.checkout", { ref: "topic", create: true })).summary).toMatch(
      /already exists/,
    );

    const listed = await repo.call("git.branch");
    expect(listed.summary.split("\n").map((l) => l.slice(0, 12).trimEnd())).toEqual([
      "  feature/x",
      "  main",
      "* topic",
    ]);
  });

  it("checkout of a commit detaches HEAD; status and branch say so", async () => {
    repo = createRepoWithHistory();
    const first = repo.git("rev-parse", "HEAD~1").trim();
    const r = await repo.call("git.checkout", { ref: "HEAD~1" });
    expect(r.summary).toBe(`HEAD is now detached at ${first.slice(0, 7)} Add readme.`);
    expect((await repo.call("git.status")).summary).toMatch(/^HEAD detached at/);
    expect((await repo.call("git.branch")).summary).toMatch(
      /^\* \(HEAD detached at [0-9a-f]{7} Add readme\)\n {2}main/,
    );
  });

  it("never overwrites uncommitted changes, and carries compatible ones over", async () => {
    repo = createRepoWithHistory();
    repo.git("checkout", "-q", "-b", "other");
    repo.write("src/app.ts", "on other\n");
    repo.git("commit", "-q", "-am", "other change");
    repo.git("checkout", "-q", "main");
    repo.write("src/app.ts", "local edit\n");
    const refused = await repo.call("git.checkout", { ref: "other" });
    expect(refused.success).toBe(false);
    expect(refused.summary).toMatch(/would be overwritten/);
    expect(refused.summary).toMatch(/Nothing was changed/);
    expect(readFileSync(join(repo.workspace, "src/app.ts"), "utf8")).toBe("local edit\n");
    expect(repo.git("branch", "--show-current").trim()).toBe("main");

    repo.git("checkout", "-q", "--", "src/app.ts");
    repo.write("README.md", "edited\n");
    const carried = await repo.call("git.checkout", { ref: "other" });
    expect(carried.summary).toContain("Local changes carried over:\n M README.md");
  });

  it("an unknown ref suggests the closest branch; a file name is never checked out as a path", async () => {
    repo = createRepoWithHistory();
    repo.write("README.md", "local edit\n");
    const typo = await repo.call("git.checkout", { ref: "mainn" });
    expect(typo.success).toBe(false);
    expect(typo.summary).toMatch(/Did you mean 'main'\?/);
    // `git checkout README.md` would discard the edit; git.checkout treats it as a ref only.
    const path = await repo.call("git.checkout", { ref: "README.md" });
    expect(path.success).toBe(false);
    expect(readFileSync(join(repo.workspace, "README.md"), "utf8")).toBe("local edit\n");
  });

  it("branch names git refuses are clear failures", async () => {
    repo = createRepoWithHistory();
    for (const name of ["a..b", "x.lock", "trailing/"]) {
      const r = await repo.call("git.branch", { name });
      expect(r.success, name).toBe(false);
      expect(r.summary).toMatch(/is not a valid branch name/);
    }
    expect(existsSync(join(repo.workspace, ".git/refs/heads/a..b"))).toBe(false);
  });
});
