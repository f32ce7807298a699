import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { MissingRepositoryError, UnsafeRepositoryError } from "./repo-guard.js";
import { treeGit } from "./tree-git.js";

const gitPart = needs(["git"]);

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const env = { PATH: process.env.PATH, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" };

function tree() {
  const base = mkdtempSync(join(tmpdir(), "capgate-tree-git-"));
  roots.push(base);
  const root = join(base, "tree");
  mkdirSync(root);
  return { base, root, marker: join(base, "marker") };
}

describe.skipIf(gitPart.skip)(`treeGit${gitPart.note}`, () => {
  it("checks the repository before every call: none, a .git file, an include — each refused before git runs", async () => {
    const t = tree();
    const git = treeGit({ root: t.root, env, timeoutMs: 30_000 });
    await expect(git.run(["status"])).rejects.toBeInstanceOf(MissingRepositoryError);
    writeFileSync(join(t.root, ".git"), `gitdir: ${t.base}\n`);
    await expect(git.run(["status"])).rejects.toThrow(/'\.git' in the workspace is a file pointing git at/);
    rmSync(join(t.root, ".git"));
    execFileSync("git", ["init", "-q", t.root], { env });
    expect((await git.ok(["status", "--porcelain"])).stdout).toBe("");
    // Planted between two calls of the same runner: the next call sees it.
    execFileSync("git", ["config", "include.path", join(t.base, "other")], { cwd: t.root, env });
    const refused = git.run(["status"]);
    await expect(refused).rejects.toBeInstanceOf(UnsafeRepositoryError);
    await expect(refused).rejects.toThrow(/include\.path/);
  });

  it("runs git with the repository's programs off (fsmonitor, filter, textconv) and the caller's settings last", async () => {
    const t = tree();
    execFileSync("git", ["init", "-q", t.root], { env });
    const cfg = (k: string, v: string) => execFileSync("git", ["config", k, v], { cwd: t.root, env });
    cfg("core.fsmonitor", `touch '${t.marker}'`);
    cfg("filter.x.clean", `touch '${t.marker}'; cat`);
    cfg("diff.x.textconv", `touch '${t.marker}'; cat`);
    writeFileSync(join(t.root, ".gitattributes"), "* filter=x diff=x\n");
    writeFileSync(join(t.root, "f"), "f\n");
    const git = treeGit({
      root: t.root,
      env,
      timeoutMs: 30_000,
      settings: () => ["user.name=Set By Caller", "user.email=caller@example.com"],
    });
    await git.ok(["add", "-A"]);
    await git.ok(["commit", "-q", "-m", "f"]);
    writeFileSync(join(t.root, "f"), "g\n");
    await git.ok(["diff", "--no-textconv", "--no-ext-diff"]);
    await git.ok(["status"]);
    expect(existsSync(t.marker)).toBe(false);
    expect((await git.ok(["log", "-1", "--format=%an <%ae>"])).stdout.trim()).toBe(
      "Set By Caller <caller@example.com>",
    );
  });
});
