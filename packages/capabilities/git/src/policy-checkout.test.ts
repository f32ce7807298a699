// git.checkout and the policy file it must never change (round 4b of the red team): a branch
// the model builds with plumbing can delete an *ignored* capgate.config.json to make room
// (git treats ignored files as expendable), replace the directory that holds it, or turn
// the file into a directory. Each attack first runs with plain git as a control.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRepo, createRepoWithHistory, type GitTestRepo } from "./test-support.js";

const POLICY = '{"shell":{"deny":[{"prefix":["git","push"]}]}}\n';
const open: GitTestRepo[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

/** A branch built without touching the work tree: `edit` changes a temporary index. */
function plumbingBranch(
  repo: GitTestRepo,
  name: string,
  edit: (git: (...a: string[]) => string) => void,
): void {
  const env = { ...repo.env, GIT_INDEX_FILE: join(repo.root, `idx-${name}`) };
  const git = (...a: string[]) =>
    execFileSync("git", a, { cwd: repo.workspace, env, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
  const head = (() => {
    try {
      return git("rev-parse", "--verify", "-q", "HEAD").trim();
    } catch {
      return undefined;
    }
  })();
  if (head) git("read-tree", "HEAD");
  else git("read-tree", "--empty");
  edit(git);
  const tree = git("write-tree").trim();
  const commit = execFileSync("git", ["commit-tree", tree, ...(head ? ["-p", head] : []), "-m", name], {
    cwd: repo.workspace,
    env: repo.env,
    encoding: "utf8",
  }).trim();
  repo.git("branch", "-f", name, commit);
}

describe("git.checkout never changes a policy file, tracked or not", { timeout: 60_000 }, () => {
  it("a branch that replaces the working directory's app/ with a link deletes its ignored policy file with plain git; git.checkout refuses", async () => {
    const setup = () => {
      const repo = createRepoWithHistory();
      open.push(repo);
      mkdirSync(join(repo.workspace, "app"));
      repo.write("app/readme", "x\n");
      repo.git("add", "app/readme");
      repo.git("commit", "-qm", "app");
      repo.write("app/capgate.config.json", POLICY);
      repo.write(".gitignore", "capgate.config.json\n");
      mkdirSync(join(repo.workspace, "evil"));
      repo.write("evil/capgate.config.json", '{"shell":{"sandbox":"off"}}\n');
      plumbingBranch(repo, "evilb", (git) => {
        git("update-index", "--force-remove", "app/readme");
        git("update-index", "--add", "--cacheinfo", `120000,${repo.hashObject("evil")},app`);
      });
      return repo;
    };
    const control = setup();
    control.git("switch", "-q", "evilb");
    expect(lstatSync(join(control.workspace, "app")).isSymbolicLink()).toBe(true);

    const repo = setup();
    const before = process.cwd();
    try {
      process.chdir(join(repo.workspace, "app"));
      const r = await repo.call("git.checkout", { ref: "evilb" });
      expect(r.success, r.summary).toBe(false);
      expect(r.summary).toContain("would replace 'app'");
      expect(r.summary).toContain("capgate's own policy file");
    } finally {
      process.chdir(before);
    }
    expect(readFileSync(join(repo.workspace, "app", "capgate.config.json"), "utf8")).toBe(POLICY);
    expect(repo.git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("main");
  });

  it("the same switch is refused from the root too: the directory on disk holds a policy file", async () => {
    const repo = createRepoWithHistory();
    open.push(repo);
    mkdirSync(join(repo.workspace, "lib"));
    repo.write("lib/index.js", "1\n");
    repo.git("add", "lib/index.js");
    repo.git("commit", "-qm", "lib");
    repo.write("lib/capgate.config.json", POLICY);
    repo.write(".gitignore", "capgate.config.json\n");
    plumbingBranch(repo, "flat", (git) => {
      git("update-index", "--force-remove", "lib/index.js");
      git("update-index", "--add", "--cacheinfo", `100644,${repo.hashObject("a file now\n")},lib`);
    });
    const r = await repo.call("git.checkout", { ref: "flat" });
    expect(r.success, r.summary).toBe(false);
    expect(r.summary).toContain("would replace the directory 'lib', which holds 'lib/capgate.config.json'");
    expect(readFileSync(join(repo.workspace, "lib", "capgate.config.json"), "utf8")).toBe(POLICY);
  });

  it("a tree with capgate.config.json/x (the root policy file becomes a directory) is refused", async () => {
    const repo = createRepoWithHistory();
    open.push(repo);
    repo.write("capgate.config.json", POLICY);
    repo.write(".gitignore", "capgate.config.json\n");
    plumbingBranch(repo, "evil2", (git) => {
      git("update-index", "--add", "--cacheinfo", `100644,${repo.hashObject("x\n")},capgate.config.json/x`);
    });
    const r = await repo.call("git.checkout", { ref: "evil2" });
    expect(r.success, r.summary).toBe(false);
    expect(r.summary).toContain("would write or delete 'capgate.config.json/x'");
    expect(readFileSync(join(repo.workspace, "capgate.config.json"), "utf8")).toBe(POLICY);
  });

  it("from an unborn HEAD every file of the target counts (a diff against HEAD would list nothing)", async () => {
    const repo = createRepo();
    open.push(repo);
    plumbingBranch(repo, "seed", (git) => {
      git(
        "update-index",
        "--add",
        "--cacheinfo",
        `100644,${repo.hashObject('{"shell":{"sandbox":"off"}}\n')},capgate.config.json`,
      );
    });
    const r = await repo.call("git.checkout", { ref: "seed" });
    expect(r.success, r.summary).toBe(false);
    expect(r.summary).toContain("would write or delete 'capgate.config.json'");
    expect(existsSync(join(repo.workspace, "capgate.config.json"))).toBe(false);
  });

  it("ordinary switches still work, and a look-alike name is not the policy file", async () => {
    const repo = createRepoWithHistory();
    open.push(repo);
    repo.write("capgate.config.json", POLICY);
    repo.write(".gitignore", "capgate.config.json\n");
    repo.git("add", ".gitignore");
    repo.git("commit", "-qm", "ignore");
    repo.git("checkout", "-q", "-b", "feature");
    repo.write("src/new.ts", "export {};\n");
    repo.write("docs/capgate.config.json.example", "{}\n");
    repo.git("add", "src/new.ts", "docs/capgate.config.json.example");
    repo.git("commit", "-qm", "feature");
    repo.git("checkout", "-q", "main");
    const r = await repo.call("git.checkout", { ref: "feature" });
    expect(r.success, r.summary).toBe(true);
    expect(realpathSync(join(repo.workspace, "src", "new.ts"))).toBeTruthy();
    expect(readFileSync(join(repo.workspace, "capgate.config.json"), "utf8")).toBe(POLICY);
  });
});
