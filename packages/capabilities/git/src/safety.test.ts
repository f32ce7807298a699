import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { capability } from "./capability.js";
import { createRepo, createRepoWithHistory, type GitTestRepo } from "./test-support.js";

// These drive real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);
const describeGit = (name: string, body: () => void) =>
  describe.skipIf(gitPart.skip)(name + gitPart.note, body);

let repo: GitTestRepo;
afterEach(() => repo?.close());

/** A script that appends its name to `marker` when run. */
function markerScript(repo: GitTestRepo, name: string, marker: string): string {
  const file = join(repo.root, name);
  repo.write(`../${name}`, `#!/bin/sh\necho ${name} >> '${marker}'\ncat\n`);
  chmodSync(file, 0o755);
  return file;
}

function handler(tool: string) {
  const h = capability.handlers.get(tool);
  if (!h) throw new Error(tool);
  return h;
}

describeGit("arguments never become git options", () => {
  it("refs starting with '-' are rejected by the schema and by the handler itself", async () => {
    repo = createRepoWithHistory();
    const out = join(repo.root, "injected");
    const attempts: [string, Record<string, unknown>][] = [
      ["git.show", { ref: `--output=${out}` }],
      ["git.show", { ref: "-h" }],
      ["git.checkout", { ref: `--upload-pack=touch ${out}` }],
      ["git.checkout", { ref: "-f" }],
      ["git.branch", { name: "-D" }],
    ];
    for (const [tool, args] of attempts) {
      await expect(repo.call(tool, args), `${tool} ${JSON.stringify(args)}`).rejects.toMatchObject({
        code: "invalid_arguments",
      });
      // Called directly (no executor, no schema), the handler refuses too.
      await expect(handler(tool)(args, repo.ctx)).rejects.toMatchObject({ code: "invalid_arguments" });
    }
    // Control characters would let a ref end a line or hide a second word: refused too.
    await expect(repo.call("git.show", { ref: `HEAD\n--output=${out}` })).rejects.toMatchObject({
      code: "invalid_arguments",
      property: "ref",
    });
    expect(existsSync(out)).toBe(false);
    expect(repo.git("branch", "--show-current").trim()).toBe("main");
  });

  it("paths that look like options are names after `--`", async () => {
    repo = createRepoWithHistory();
    const out = join(repo.root, "injected");
    const diff = await repo.call("git.diff", { path: `--output=${out}` });
    expect(diff).toMatchObject({ success: true });
    expect(diff.summary).toMatch(/^No unstaged changes under --output=/);
    const log = await repo.call("git.log", { path: "-h" });
    expect(log).toMatchObject({ success: true, summary: "No commits touching -h." });
    const add = await repo.call("git.add", { paths: [`--output=${out}`, "-A"] });
    expect(add.success).toBe(false);
    expect(add.summary).toMatch(/did not match any files/);
    expect(existsSync(out)).toBe(false);

    // A file really named "-h" is just a file.
    repo.write("-h", "dash\n");
    const real = await repo.call("git.add", { paths: ["-h"] });
    expect(real.success).toBe(true);
    expect(repo.git("diff", "--cached", "--name-only")).toBe("-h\n");
  });

  it("paths are literal: no globs, no :(magic)", async () => {
    repo = createRepoWithHistory();
    repo.write("src/a.ts", "a\n");
    repo.write("src/b.ts", "b\n");
    for (const path of ["src/*.ts", ":(glob)src/*.ts", ":/src"]) {
      const r = await repo.call("git.add", { paths: [path] });
      expect(r.success, path).toBe(false);
    }
    expect(repo.git("diff", "--cached", "--name-only")).toBe("");
  });

  it("a ref cannot smuggle a second argument or an option after a space", async () => {
    repo = createRepoWithHistory();
    const out = join(repo.root, "injected");
    const r = await repo.call("git.show", { ref: `HEAD --output=${out}` });
    expect(r.success).toBe(false);
    expect(existsSync(out)).toBe(false);
  });
});

describeGit("paths stay inside the workspace", () => {
  it.each([
    ["git.diff", { path: "../outside" }],
    ["git.diff", { path: "/etc/passwd" }],
    ["git.log", { path: "../.." }],
    ["git.add", { paths: ["ok.txt", "../../etc/passwd"] }],
  ])("%s %j is refused by policy", async (tool, args) => {
    repo = createRepoWithHistory();
    await expect(repo.call(tool, args)).rejects.toMatchObject({ code: "policy_denied" });
    expect(repo.git("diff", "--cached", "--name-only")).toBe("");
  });

  it("a symlink leading out is refused; the property is named", async () => {
    repo = createRepoWithHistory();
    symlinkSync("/etc", join(repo.workspace, "etc-link"));
    await expect(repo.call("git.add", { paths: ["etc-link/passwd"] })).rejects.toMatchObject({
      code: "policy_denied",
      property: "paths[0]",
    });
  });
});

describeGit("the workspace must be a repository of its own", () => {
  it("no repository: a clear failure pointing to git init, and none is created", async () => {
    repo = createRepo({ init: false });
    for (const tool of ["git.status", "git.log", "git.branch"]) {
      const r = await repo.call(tool);
      expect(r.success, tool).toBe(false);
      expect(r.summary).toMatch(
        /not a git repository: the workspace .* has no git repository\. Run `git init`/,
      );
    }
    const commit = await repo.call("git.commit", { message: "x" });
    expect(commit.summary).toMatch(/not a git repository/);
    expect(existsSync(join(repo.workspace, ".git"))).toBe(false);
  });

  it("a workspace inside a bigger repository is refused, naming that repository", async () => {
    repo = createRepoWithHistory();
    mkdirSync(join(repo.workspace, "packages", "app"), { recursive: true });
    const inner = { ...repo.ctx, workspace: join(repo.workspace, "packages", "app") };
    const r = await repo.call("git.status", {}, inner);
    expect(r.success).toBe(false);
    expect(r.summary).toContain(`is inside the repository at '${repo.workspace}' but is not its root`);
  });

  it("GIT_DIR and friends in the host environment do not redirect git", async () => {
    repo = createRepoWithHistory();
    const other = createRepo();
    try {
      other.write("elsewhere.txt", "x\n");
      const env = {
        ...repo.env,
        GIT_DIR: join(other.workspace, ".git"),
        GIT_WORK_TREE: other.workspace,
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "core.hooksPath",
        GIT_CONFIG_VALUE_0: other.workspace,
      };
      const r = await repo.call("git.status", {}, { env });
      expect(r.summary).toBe("On branch main\nNothing to commit, working tree clean.");
    } finally {
      await other.close();
    }
  });
});

describeGit("the repository's own programs do not run", () => {
  it("hooks, fsmonitor, textconv, external diff and pager configured in the repository are not run", async () => {
    repo = createRepoWithHistory();
    const marker = join(repo.root, "ran.log");
    const script = markerScript(repo, "prog", marker);
    for (const hook of ["pre-commit", "commit-msg", "post-commit", "post-checkout", "prepare-commit-msg"]) {
      repo.write(`.git/hooks/${hook}`, `#!/bin/sh\necho ${hook} >> '${marker}'\n`);
      chmodSync(join(repo.workspace, ".git/hooks", hook), 0o755);
    }
    repo.git("config", "core.fsmonitor", script);
    repo.git("config", "diff.conv.textconv", script);
    repo.git("config", "diff.external", script);
    repo.git("config", "core.pager", script);
    repo.write(".gitattributes", "*.md diff=conv\n");

    repo.write("README.md", "# changed\n");
    await repo.call("git.status");
    expect((await repo.call("git.diff")).summary).toContain("+# changed");
    await repo.call("git.add", { paths: ["README.md", ".gitattributes"] });
    expect((await repo.call("git.commit", { message: "no hooks" })).success).toBe(true);
    await repo.call("git.show", { ref: "HEAD" });
    await repo.call("git.log");
    await repo.call("git.checkout", { ref: "side", create: true });
    expect(existsSync(marker)).toBe(false);

    // Control: plain git in the same repository does run them, so the check above can fail.
    repo.write("README.md", "# again\n");
    repo.git("commit", "-q", "-am", "with hooks");
    expect(readFileSync(marker, "utf8")).toMatch(/pre-commit/);
  });

  it("commit signing configured in the repository is not attempted", async () => {
    repo = createRepoWithHistory();
    const marker = join(repo.root, "ran.log");
    const script = markerScript(repo, "fake-gpg", marker);
    repo.git("config", "commit.gpgSign", "true");
    repo.git("config", "gpg.program", script);
    repo.write("README.md", "# signed?\n");
    await repo.call("git.add", { paths: ["README.md"] });
    expect((await repo.call("git.commit", { message: "unsigned" })).success).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});

describeGit("output limits", () => {
  it("a long status lists the first 200 entries and counts the rest", async () => {
    repo = createRepoWithHistory();
    for (let i = 0; i < 250; i++) repo.write(`f${String(i).padStart(3, "0")}.txt`, "x\n");
    const r = await repo.call("git.status");
    expect(r.summary).toContain("… and 50 more");
    expect(r.summary).toMatch(/250 untracked\.$/);
    expect((r.data as { entries: unknown[] }).entries).toHaveLength(250);
  });
});
