// A run's checkout is a tree the model wrote; publishing it (`git add`, `status`, `commit`,
// the fetch into the workspace repository) must run nothing of it. Each test plants one
// attack the way a run's shell command would, publishes for real, and checks that the
// planted program did not run (its marker file, outside the checkout, holds the secret of
// the hidden state directory and `id` when it does) and that what was published carries no
// gitlink and no `.git` path. Each runs with the run's sandbox on (the default) and off
// (the hardening of @capgate/git-guard alone must hold), and the controls show the same
// plant does run the program under the publish's old settings.
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { prepareRunWorkspace, type RunResult, type RunWorkspaceOptions } from "./run-workspace.js";

const gitPart = needs(["git"]);
const sandboxPart = needs(["git", "bwrap"]);

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const identity = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
};
// The machine's own git config plays no part in planting or checking.
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  ...identity,
};

interface Scene {
  source: string;
  work: string;
  /** capgate's state directory, with a secret in it: hidden from the run's commands. */
  stateDir: string;
  /** Written by the planted program, outside the checkout. */
  marker: string;
  /** The planted program: reads the secret and writes it, with `id`, to the marker. */
  program: string;
  options: RunWorkspaceOptions;
}

function scene(sandbox: "on" | "off", repository = true): Scene {
  const root = mkdtempSync(join(tmpdir(), "capgate-publish-attack-"));
  roots.push(root);
  const source = join(root, "source");
  const stateDir = join(root, "state");
  const loot = join(root, "loot");
  for (const d of [source, stateDir, loot]) mkdirSync(d);
  writeFileSync(join(stateDir, "secret"), "state-dir-secret\n");
  writeFileSync(join(source, "a.txt"), "one\n");
  if (repository) {
    for (const args of [
      ["init", "-q"],
      ["add", "-A"],
      ["commit", "-q", "-m", "init"],
    ])
      git(source, ...args);
  }
  const marker = join(loot, "marker");
  return {
    source,
    work: join(root, "work"),
    stateDir,
    marker,
    program: `cat '${join(stateDir, "secret")}' > '${marker}'; id >> '${marker}'`,
    options: {
      env,
      sandbox: { stateDir, ...(sandbox === "off" ? { shell: { sandbox: "off" as const } } : {}) },
    },
  };
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** A shell command in the checkout, as the run's shell.run would give it. */
function sh(cwd: string, command: string): void {
  execFileSync("bash", ["-c", command], { cwd, env, stdio: "pipe" });
}

/** The issue's own plant: a nested repository whose core.fsmonitor is the program, with a change in it. */
function plantFsmonitor(dir: string, program: string): void {
  sh(
    dir,
    `mkdir sub && cd sub && git init -q && git commit -q --allow-empty -m x && git config core.fsmonitor ${JSON.stringify(program)} && echo change > f`,
  );
}

/** Every commit the branch adds to the base: no gitlink, no `.git` path in any of their trees. */
function expectCleanHistory(source: string, branch: string, base: string): void {
  const commits = git(source, "rev-list", branch, `^${base}`).split("\n").filter(Boolean);
  expect(commits.length).toBeGreaterThan(0);
  for (const commit of commits) {
    const entries = git(source, "ls-tree", "-r", "-t", "-z", "--full-tree", commit)
      .split("\0")
      .filter(Boolean);
    expect(
      entries.filter((e) => e.startsWith("160000 ")),
      `gitlink in ${commit}`,
    ).toEqual([]);
    const paths = entries.map((e) => e.slice(e.indexOf("\t") + 1));
    expect(paths.filter((p) => p.split("/").some((part) => part.toLowerCase() === ".git"))).toEqual([]);
  }
}

function branchOf(result: RunResult): { branch: string; commit: string } {
  if (result.kind !== "branch") throw new Error(`expected a branch, got ${JSON.stringify(result)}`);
  return result;
}

for (const sandbox of ["on", "off"] as const) {
  const part = sandbox === "on" ? sandboxPart : gitPart;
  // Each publish starts about ten sandboxes when it is on: slow on a loaded machine, not wrong.
  describe.skipIf(part.skip)(
    `publishing runs nothing of the checkout (sandbox ${sandbox})${part.note}`,
    { timeout: 120_000 },
    () => {
      it("clone: the issue's nested repository with core.fsmonitor — the program does not run, the branch carries sub/f, not a gitlink", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "fsm", s.options);
        plantFsmonitor(ws.dir, s.program);
        const result = await ws.publish("run fsm");
        expect(existsSync(s.marker), existsSync(s.marker) ? readFileSync(s.marker, "utf8") : "").toBe(false);
        const { branch } = branchOf(result);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "show", `${branch}:sub/f`)).toBe("change\n");
        expect(result.stripped).toEqual([{ path: "sub/.git", kind: "repository" }]);
        expect(result.notice).toMatch(/nested git repositories \('sub\/\.git'/);
      });

      it("copy: the same plant in a copied workspace — no program runs, the patch has sub/f and no gitlink", async () => {
        const s = scene(sandbox, false);
        const ws = await prepareRunWorkspace(s.source, s.work, "fsmc", s.options);
        expect(ws.mode).toBe("copy");
        plantFsmonitor(ws.dir, s.program);
        const result = await ws.publish("run fsmc");
        expect(existsSync(s.marker)).toBe(false);
        if (result.kind !== "patch") throw new Error(JSON.stringify(result));
        expect(result.files).toEqual(["sub/f"]);
        expect(result.patch).not.toMatch(/Subproject commit|160000/);
        expect(result.stripped).toEqual([{ path: "sub/.git", kind: "repository" }]);
      });

      it("a nested repository's filter driver (its config + its .gitattributes) does not run", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "filter", s.options);
        sh(ws.dir, "mkdir sub && cd sub && git init -q && echo x > f && git add f && git commit -q -m x");
        git(join(ws.dir, "sub"), "config", "filter.evil.clean", `${s.program}; cat`);
        writeFileSync(join(ws.dir, "sub", ".gitattributes"), "* filter=evil\n");
        writeFileSync(join(ws.dir, "sub", "f"), "y\n");
        const { branch } = branchOf(await ws.publish("run filter"));
        expect(existsSync(s.marker)).toBe(false);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "show", `${branch}:sub/f`)).toBe("y\n");
      });

      it("a `.git` file pointing at a repository outside the checkout (with an fsmonitor) is stripped, never followed", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const outside = join(s.work, "..", "outside-repo");
        mkdirSync(outside);
        sh(outside, "git init -q && git commit -q --allow-empty -m x");
        git(outside, "config", "core.fsmonitor", s.program);
        const ws = await prepareRunWorkspace(s.source, s.work, "gitfile", s.options);
        mkdirSync(join(ws.dir, "vendor"));
        writeFileSync(join(ws.dir, "vendor", ".git"), `gitdir: ${join(outside, ".git")}\n`);
        writeFileSync(join(ws.dir, "vendor", "lib.txt"), "lib\n");
        const result = await ws.publish("run gitfile");
        expect(existsSync(s.marker)).toBe(false);
        const { branch } = branchOf(result);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "show", `${branch}:vendor/lib.txt`)).toBe("lib\n");
        expect(result.stripped).toEqual([{ path: "vendor/.git", kind: "gitdir_file" }]);
        // The repository it pointed at is untouched.
        expect(existsSync(join(outside, ".git", "HEAD"))).toBe(true);
      });

      it("a gitlink the run committed itself: that history is replaced by one commit of the final tree, without it", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "own", s.options);
        plantFsmonitor(ws.dir, s.program);
        // The run stages and commits the nested repository (as a shell command could).
        sh(
          ws.dir,
          "git -c core.fsmonitor=false add sub && git -c core.fsmonitor=false commit -q -m 'add sub'",
        );
        expect(git(ws.dir, "ls-tree", "HEAD", "sub")).toMatch(/^160000 /);
        const result = await ws.publish("run own");
        expect(existsSync(s.marker)).toBe(false);
        const { branch } = branchOf(result);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "rev-list", "--count", branch, `^${head}`).trim()).toBe("1");
        expect(result.replaced).toEqual([expect.objectContaining({ path: "sub", why: "gitlink" })]);
        expect(result.notice).toMatch(/one commit of the final tree was published instead/);
      });

      it("a gitlink planted in the index alone (update-index --cacheinfo 160000) is taken out before the commit", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "cacheinfo", s.options);
        // With its directory there (empty, as an unpopulated submodule's is), `add -A` keeps it.
        git(ws.dir, "update-index", "--add", "--cacheinfo", `160000,${head},planted`);
        mkdirSync(join(ws.dir, "planted"));
        writeFileSync(join(ws.dir, "b.txt"), "b\n");
        const result = await ws.publish("run cacheinfo");
        const { branch } = branchOf(result);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "show", `${branch}:b.txt`)).toBe("b\n");
        expect(result.stripped).toEqual([{ path: "planted", kind: "gitlink" }]);
      });

      it("a crafted commit whose tree holds `.git/config` is not published as history", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "dotgit", s.options);
        const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], {
          cwd: ws.dir,
          env,
          input: `[core]\n\tfsmonitor = ${s.program}\n`,
          encoding: "utf8",
        }).trim();
        const inner = execFileSync("git", ["mktree"], {
          cwd: ws.dir,
          env,
          input: `100644 blob ${blob}\tconfig\n`,
          encoding: "utf8",
        }).trim();
        const top = execFileSync("git", ["mktree"], {
          cwd: ws.dir,
          env,
          input: `040000 tree ${inner}\t.git\n`,
          encoding: "utf8",
        }).trim();
        const crafted = git(ws.dir, "commit-tree", top, "-p", "HEAD", "-m", "crafted").trim();
        git(ws.dir, "update-ref", "HEAD", crafted);
        writeFileSync(join(ws.dir, "c.txt"), "c\n");
        const result = await ws.publish("run dotgit");
        const { branch } = branchOf(result);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "rev-list", branch).split("\n")).not.toContain(crafted);
        expect(result.replaced?.[0]).toMatchObject({ path: ".git/config", why: "dotgit" });
      });

      it("a directory git would take for a bare repository loses its HEAD; a FIFO named .gitignore does not hang the publish", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "bare", s.options);
        sh(ws.dir, "git init -q --bare embedded && mkdir -p docs && mkfifo docs/.gitignore");
        git(join(ws.dir, "embedded"), "config", "core.fsmonitor", s.program);
        const result = await ws.publish("run bare");
        const { branch } = branchOf(result);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "ls-tree", "-r", "--name-only", branch, "embedded")).not.toMatch(
          /^embedded\/HEAD$/m,
        );
        expect(result.stripped).toEqual([
          { path: "docs/.gitignore", kind: "special_file" },
          { path: "embedded/HEAD", kind: "bare_repository" },
        ]);
        // The user's own git in the published tree no longer finds a repository there to obey.
        const clone = join(s.work, "..", "user-clone");
        execFileSync("git", ["clone", "-q", "-b", branch, s.source, clone], { env });
        spawnSync("git", ["status"], { cwd: join(clone, "embedded"), env, stdio: "ignore", timeout: 20_000 });
        expect(existsSync(s.marker)).toBe(false);
      });

      it("the checkout's own config (writable when the sandbox is off): fsmonitor, hooks path, a filter, diff.external — none runs", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "rootcfg", s.options);
        mkdirSync(join(ws.dir, "hooks"));
        for (const hook of ["pre-commit", "post-commit", "post-index-change", "reference-transaction"]) {
          writeFileSync(join(ws.dir, "hooks", hook), `#!/bin/sh\n${s.program}\n`, { mode: 0o755 });
        }
        for (const [key, value] of [
          ["core.fsmonitor", s.program],
          ["core.hooksPath", join(ws.dir, "hooks")],
          ["filter.evil.clean", `${s.program}; cat`],
          ["filter.evil.required", "true"],
          ["diff.external", s.program],
          ["diff.evil.textconv", `${s.program}; cat`],
        ] as const)
          git(ws.dir, "config", key, value);
        writeFileSync(join(ws.dir, ".gitattributes"), "* filter=evil diff=evil\n");
        writeFileSync(join(ws.dir, "a.txt"), "two\n");
        const { branch } = branchOf(await ws.publish("run rootcfg"));
        expect(existsSync(s.marker)).toBe(false);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "show", `${branch}:a.txt`)).toBe("two\n");
      });

      it("copy: the checkout's own diff driver and external diff do not run while the patch is made", async () => {
        const s = scene(sandbox, false);
        const ws = await prepareRunWorkspace(s.source, s.work, "copycfg", s.options);
        git(ws.dir, "config", "diff.external", s.program);
        git(ws.dir, "config", "diff.evil.textconv", `${s.program}; cat`);
        git(ws.dir, "config", "diff.noprefix", "true");
        writeFileSync(join(ws.dir, ".gitattributes"), "* diff=evil\n");
        writeFileSync(join(ws.dir, "a.txt"), "two\n");
        const result = await ws.publish("run copycfg");
        expect(existsSync(s.marker)).toBe(false);
        if (result.kind !== "patch") throw new Error(JSON.stringify(result));
        expect(result.patch).toContain("diff --git a/a.txt b/a.txt");
        expect(result.patch).toContain("+two");
      });

      it("core.worktree pointing at the state directory is refused: its secret is never staged or published", async () => {
        const s = scene(sandbox);
        const ws = await prepareRunWorkspace(s.source, s.work, "worktree", s.options);
        git(ws.dir, "config", "core.worktree", s.stateDir);
        await expect(ws.publish("run worktree")).rejects.toThrow(/core\.worktree/);
        expect(git(s.source, "branch", "--list", "capgate/run-worktree")).toBe("");
      });

      it("config.worktree (extensions.worktreeConfig) naming an fsmonitor and a filter: neither runs", async () => {
        const s = scene(sandbox);
        const head = git(s.source, "rev-parse", "HEAD").trim();
        const ws = await prepareRunWorkspace(s.source, s.work, "wtconfig", s.options);
        git(ws.dir, "config", "extensions.worktreeConfig", "true");
        writeFileSync(
          join(ws.dir, ".git", "config.worktree"),
          `[core]\n\tfsmonitor = ${s.program}\n[filter "wt"]\n\tclean = ${s.program}; cat\n`,
        );
        writeFileSync(join(ws.dir, ".gitattributes"), "* filter=wt\n");
        writeFileSync(join(ws.dir, "a.txt"), "two\n");
        const { branch } = branchOf(await ws.publish("run wtconfig"));
        expect(existsSync(s.marker)).toBe(false);
        expectCleanHistory(s.source, branch, head);
        expect(git(s.source, "show", `${branch}:a.txt`)).toBe("two\n");
      });

      it("an include.path in the checkout's config is refused, naming it: nothing is published and nothing runs", async () => {
        const s = scene(sandbox);
        const ws = await prepareRunWorkspace(s.source, s.work, "include", s.options);
        const evil = join(s.work, "..", "evil.config");
        writeFileSync(evil, `[core]\n\tfsmonitor = ${s.program}\n`);
        git(ws.dir, "config", "include.path", evil);
        writeFileSync(join(ws.dir, "a.txt"), "two\n");
        await expect(ws.publish("run include")).rejects.toThrow(/include\.path/);
        expect(existsSync(s.marker)).toBe(false);
        expect(git(s.source, "branch", "--list", "capgate/run-include")).toBe("");
      });

      it("a link pointing out of the checkout is published as a link, never followed", async () => {
        const s = scene(sandbox);
        const ws = await prepareRunWorkspace(s.source, s.work, "link", s.options);
        symlinkSync(join(s.stateDir, "secret"), join(ws.dir, "leak"));
        const { branch } = branchOf(await ws.publish("run link"));
        expect(git(s.source, "ls-tree", branch, "leak")).toMatch(/^120000 /);
        expect(git(s.source, "show", `${branch}:leak`)).toBe(join(s.stateDir, "secret"));
      });
    },
  );
}

describe.skipIf(gitPart.skip)(
  `the controls: the same plants do run a program under the old publish settings${gitPart.note}`,
  () => {
    // What publish ran before: `git -c core.hooksPath=/dev/null -c gc.auto=0 add -A`, then status.
    const old = (cwd: string, ...args: string[]) =>
      spawnSync("git", ["-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", ...args], {
        cwd,
        env,
        stdio: "ignore",
      });

    it("the nested repository's core.fsmonitor runs", () => {
      const s = scene("off");
      const dir = join(s.work, "plain");
      mkdirSync(dir, { recursive: true });
      sh(dir, "git init -q && git commit -q --allow-empty -m x");
      plantFsmonitor(dir, s.program);
      old(dir, "add", "-A");
      old(dir, "status", "--porcelain");
      expect(readFileSync(s.marker, "utf8")).toMatch(/state-dir-secret[\s\S]*uid=/);
      expect(git(dir, "ls-files", "-s", "sub")).toMatch(/^160000 /);
    });

    it("the nested repository's filter driver runs", () => {
      const s = scene("off");
      const dir = join(s.work, "plain");
      mkdirSync(dir, { recursive: true });
      sh(dir, "git init -q && git commit -q --allow-empty -m x");
      sh(dir, "mkdir sub && cd sub && git init -q && echo x > f && git add f && git commit -q -m x");
      git(join(dir, "sub"), "config", "filter.evil.clean", `${s.program}; cat`);
      writeFileSync(join(dir, "sub", ".gitattributes"), "* filter=evil\n");
      writeFileSync(join(dir, "sub", "f"), "y\n");
      old(dir, "add", "-A");
      old(dir, "status", "--porcelain");
      expect(existsSync(s.marker)).toBe(true);
    });
  },
);
