import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs, shellForTests } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { prepareRunWorkspace as prepare, type RunWorkspaceOptions } from "./run-workspace.js";

// Publishing runs git in the run's sandbox, on where bubblewrap works (as users get it).
const options: RunWorkspaceOptions = { sandbox: { shell: shellForTests() } };
const prepareRunWorkspace = (source: string, work: string, id: string) => prepare(source, work, id, options);

// These drive real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);
const describeGit = (name: string, body: () => void) =>
  describe.skipIf(gitPart.skip)(name + gitPart.note, body);

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function scratch(): { source: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), "capgate-ws-"));
  roots.push(root);
  const source = join(root, "source");
  mkdirSync(source);
  writeFileSync(join(source, "a.txt"), "one\n");
  return { source, work: join(root, "work") };
}

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
};

function initRepo(source: string): void {
  for (const args of [
    ["init", "-q"],
    ["add", "-A"],
    ["commit", "-q", "-m", "init"],
  ])
    execFileSync("git", args, { cwd: source, env });
}

describeGit("a fresh checkout per run", () => {
  it("a git workspace gets a clone on its own branch; the run's change is published as a commit on that branch of the workspace repo", async () => {
    const { source, work } = scratch();
    initRepo(source);
    const ws = await prepareRunWorkspace(source, work, "r1");
    expect(ws.mode).toBe("clone");
    // A real .git directory inside the checkout (what the git tools and the sandbox require),
    // with no remote leading back to the workspace repository.
    expect(lstatSync(join(ws.dir, ".git")).isDirectory()).toBe(true);
    expect(execFileSync("git", ["remote"], { cwd: ws.dir, encoding: "utf8" })).toBe("");
    expect(execFileSync("git", ["branch", "--show-current"], { cwd: ws.dir, encoding: "utf8" }).trim()).toBe(
      "capgate/run-r1",
    );
    writeFileSync(join(ws.dir, "a.txt"), "two\n");
    writeFileSync(join(ws.dir, "b.txt"), "new\n");
    const result = await ws.publish("capgate run r1");
    expect(result).toMatchObject({ kind: "branch", branch: "capgate/run-r1" });
    expect(existsSync(ws.dir)).toBe(false);
    // The source checkout is untouched; the branch holds the work.
    expect(readFileSync(join(source, "a.txt"), "utf8")).toBe("one\n");
    expect(execFileSync("git", ["show", "capgate/run-r1:b.txt"], { cwd: source, encoding: "utf8" })).toBe(
      "new\n",
    );
    expect(
      execFileSync("git", ["rev-parse", "capgate/run-r1"], { cwd: source, encoding: "utf8" }).trim(),
    ).toBe(result.kind === "branch" ? result.commit : "");
    // Two runs at once get two checkouts; one with no change and one discarded leave no branch.
    const [x, y] = await Promise.all([
      prepareRunWorkspace(source, work, "r2"),
      prepareRunWorkspace(source, work, "r3"),
    ]);
    expect(x.dir).not.toBe(y.dir);
    expect(await x.publish("no change")).toEqual({ kind: "none" });
    await y.discard();
    expect(existsSync(x.dir) || existsSync(y.dir)).toBe(false);
    expect(
      execFileSync("git", ["branch", "--list", "capgate/*"], { cwd: source, encoding: "utf8" }),
    ).not.toMatch(/r2|r3/);
  });

  it("a commit the run made itself (on any branch) is what gets published", async () => {
    const { source, work } = scratch();
    initRepo(source);
    const ws = await prepareRunWorkspace(source, work, "own");
    writeFileSync(join(ws.dir, "c.txt"), "committed by the run\n");
    execFileSync("git", ["checkout", "-q", "-b", "elsewhere"], { cwd: ws.dir, env });
    execFileSync("git", ["add", "c.txt"], { cwd: ws.dir, env });
    execFileSync("git", ["commit", "-q", "-m", "run's own"], { cwd: ws.dir, env });
    const result = await ws.publish("capgate run own");
    expect(result).toMatchObject({ kind: "branch", branch: "capgate/run-own" });
    expect(execFileSync("git", ["show", "capgate/run-own:c.txt"], { cwd: source, encoding: "utf8" })).toBe(
      "committed by the run\n",
    );
    // Only the run's branch: the model's branch names do not reach the workspace repository.
    expect(execFileSync("git", ["branch", "--list", "elsewhere"], { cwd: source, encoding: "utf8" })).toBe(
      "",
    );
  });

  it("a run that moves back to an earlier commit publishes that commit (nothing new to carry)", async () => {
    const { source, work } = scratch();
    initRepo(source);
    writeFileSync(join(source, "a.txt"), "two\n");
    execFileSync("git", ["commit", "-q", "-am", "second"], { cwd: source, env });
    const first = execFileSync("git", ["rev-parse", "HEAD~1"], { cwd: source, encoding: "utf8" }).trim();
    const ws = await prepareRunWorkspace(source, work, "back");
    execFileSync("git", ["reset", "-q", "--hard", "HEAD~1"], { cwd: ws.dir, env });
    const result = await ws.publish("capgate run back");
    expect(result).toMatchObject({ kind: "branch", commit: first });
    expect(
      execFileSync("git", ["rev-parse", "capgate/run-back"], { cwd: source, encoding: "utf8" }).trim(),
    ).toBe(first);
  });

  it("many runs prepared, published and discarded at once on one repository all succeed", async () => {
    // What failed in CI with worktrees: one worker's add read another's half-made or
    // just-removed .git/worktrees/<id> ("Invalid path", "failed to read …/commondir").
    const { source, work } = scratch();
    initRepo(source);
    const ids = Array.from({ length: 12 }, (_, i) => `p${i}`);
    const results = await Promise.all(
      ids.map(async (id, i) => {
        const ws = await prepareRunWorkspace(source, work, id);
        writeFileSync(join(ws.dir, `${id}.txt`), `${id}\n`);
        if (i % 3 === 2) {
          await ws.discard();
          return { kind: "discarded" };
        }
        return ws.publish(`run ${id}`);
      }),
    );
    expect(results.filter((r) => r.kind === "branch")).toHaveLength(8);
    for (const [i, id] of ids.entries()) {
      const listed = execFileSync("git", ["branch", "--list", `capgate/run-${id}`], {
        cwd: source,
        encoding: "utf8",
      });
      expect(listed.includes(id)).toBe(i % 3 !== 2);
    }
    expect(
      execFileSync("git", ["fsck", "--no-progress"], { cwd: source, encoding: "utf8", stdio: "pipe" }),
    ).toBe("");
  }, 180_000); // 12 publishes at once, each starting about ten sandboxes: slow on a loaded machine, not wrong

  it("the run's object files are its own copies: rewriting one in place leaves the workspace repository intact", async () => {
    const { source, work } = scratch();
    initRepo(source);
    const ws = await prepareRunWorkspace(source, work, "ino");
    const blob = execFileSync("git", ["rev-parse", "HEAD:a.txt"], { cwd: source, encoding: "utf8" }).trim();
    const objectPath = (root: string) => join(root, ".git", "objects", blob.slice(0, 2), blob.slice(2));
    expect(statSync(objectPath(ws.dir)).ino).not.toBe(statSync(objectPath(source)).ino);
    chmodSync(objectPath(ws.dir), 0o644);
    writeFileSync(objectPath(ws.dir), "garbage");
    expect(execFileSync("git", ["cat-file", "-p", blob], { cwd: source, encoding: "utf8" })).toBe("one\n");
    await ws.discard();
  });

  it("a hook planted in the checkout does not run when the work is published", async () => {
    const { source, work } = scratch();
    initRepo(source);
    const ws = await prepareRunWorkspace(source, work, "hook");
    const marker = join(work, "hook-ran");
    for (const name of ["pre-commit", "post-commit", "commit-msg", "reference-transaction"]) {
      writeFileSync(join(ws.dir, ".git", "hooks", name), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
    }
    writeFileSync(join(ws.dir, "a.txt"), "changed\n");
    expect(await ws.publish("hooked")).toMatchObject({ kind: "branch" });
    expect(existsSync(marker)).toBe(false);
  });

  it("a plain directory is copied; the run's change is published as a patch that applies to the original", async () => {
    const { source, work } = scratch();
    const ws = await prepareRunWorkspace(source, work, "c1");
    expect(ws.mode).toBe("copy");
    writeFileSync(join(ws.dir, "a.txt"), "two\n");
    const result = await ws.publish("capgate run c1");
    expect(result).toMatchObject({ kind: "patch", files: ["a.txt"], truncated: false });
    expect(existsSync(ws.dir)).toBe(false);
    if (result.kind !== "patch") throw new Error("no patch");
    writeFileSync(join(work, "p.diff"), result.patch);
    execFileSync("git", ["apply", join(work, "p.diff")], { cwd: source });
    expect(readFileSync(join(source, "a.txt"), "utf8")).toBe("two\n");
  });
});
