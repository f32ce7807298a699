import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { prepareRunWorkspace } from "./run-workspace.js";

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

describeGit("a repository another worker is busy with", () => {
  it("a worktree another `git worktree add` is half-way through (its commondir still empty) is waited out", async () => {
    const { source, work } = scratch();
    for (const args of [
      ["init", "-q"],
      ["add", "-A"],
      ["commit", "-q", "-m", "init"],
    ])
      execFileSync("git", args, { cwd: source, env });
    // What a concurrent add leaves for a moment: the worktree's directory, an empty commondir.
    // git then refuses every other add ("failed to read …/commondir").
    const half = join(source, ".git", "worktrees", "half");
    mkdirSync(half, { recursive: true });
    writeFileSync(join(half, "gitdir"), `${join(work, "half")}/.git\n`);
    writeFileSync(join(half, "commondir"), "");
    expect(() =>
      execFileSync("git", ["worktree", "add", "-q", "-b", "probe", join(work, "probe"), "HEAD"], {
        cwd: source,
        env,
        stdio: "pipe",
      }),
    ).toThrow(/failed to read .*commondir/);
    const prepared = prepareRunWorkspace(source, work, "r-busy");
    // The other add finishes.
    setTimeout(() => writeFileSync(join(half, "commondir"), "../..\n"), 300);
    const ws = await prepared;
    expect(ws.mode).toBe("worktree");
    expect(existsSync(ws.dir)).toBe(true);
  });
});

describeGit("a fresh checkout per run", () => {
  it("a git workspace gets a worktree on its own branch; the run's change is published as a commit on it", async () => {
    const { source, work } = scratch();
    for (const args of [
      ["init", "-q"],
      ["add", "-A"],
      ["commit", "-q", "-m", "init"],
    ])
      execFileSync("git", args, { cwd: source, env });
    const ws = await prepareRunWorkspace(source, work, "r1");
    expect(ws.mode).toBe("worktree");
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
    // Two runs at once get two checkouts.
    const [x, y] = await Promise.all([
      prepareRunWorkspace(source, work, "r2"),
      prepareRunWorkspace(source, work, "r3"),
    ]);
    expect(x.dir).not.toBe(y.dir);
    expect(await x.publish("no change")).toEqual({ kind: "none" });
    await y.discard();
    expect(
      execFileSync("git", ["branch", "--list", "capgate/*"], { cwd: source, encoding: "utf8" }),
    ).not.toMatch(/r2|r3/);
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
