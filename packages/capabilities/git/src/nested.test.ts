import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { createRepoWithHistory, type GitTestRepo } from "./test-support.js";

// These drive real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);
const describeGit = (name: string, body: () => void) =>
  describe.skipIf(gitPart.skip)(name + gitPart.note, body);

// A nested repository in the workspace is the model's to plant (the shell sandbox pins only
// the workspace's own .git): its config names programs (core.fsmonitor, filter drivers),
// and once the superproject's index holds it as a gitlink, git enters it — the user's own
// `git status` runs them. The git tools never put one there: git.add refuses a nested
// repository, git.commit a gitlink HEAD does not have.

const open: GitTestRepo[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

interface Planted {
  repo: GitTestRepo;
  marker: string;
}

/** A workspace with `sub/`, a repository of its own whose fsmonitor and filter write the marker, with a change in it. */
function plant(how: "directory" | "gitfile"): Planted {
  const repo = createRepoWithHistory();
  open.push(repo);
  const marker = join(repo.root, "marker");
  const program = `id > '${marker}'`;
  const nested = how === "directory" ? join(repo.workspace, "sub") : join(repo.root, "elsewhere");
  mkdirSync(nested);
  const g = (...args: string[]) => execFileSync("git", args, { cwd: nested, env: repo.env, stdio: "pipe" });
  g("init", "-q");
  g("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "x");
  g("config", "core.fsmonitor", program);
  g("config", "filter.evil.clean", `${program}; cat`);
  if (how === "gitfile") {
    mkdirSync(join(repo.workspace, "sub"));
    writeFileSync(join(repo.workspace, "sub", ".git"), `gitdir: ${join(nested, ".git")}\n`);
  }
  writeFileSync(join(repo.workspace, "sub", ".gitattributes"), "* filter=evil\n");
  writeFileSync(join(repo.workspace, "sub", "f"), "change\n");
  return { repo, marker };
}

describeGit("nested repositories and gitlinks", () => {
  for (const how of ["directory", "gitfile"] as const) {
    it(`git.add refuses a nested repository (its .git a ${how}), naming it; nothing is staged and nothing runs`, async () => {
      const { repo, marker } = plant(how);
      for (const paths of [["."], ["sub"], ["sub/f"]]) {
        const r = await repo.call("git.add", { paths });
        expect(r.success, JSON.stringify(paths)).toBe(false);
        expect(r.summary).toMatch(/git\.add refused: 'sub' is a git repository of its own/);
        expect(r.summary).toContain("rm -rf sub/.git");
      }
      expect(repo.git("ls-files", "-s")).not.toMatch(/^160000 /m);
      // The other tools still work in such a workspace, and run nothing of it.
      for (const tool of ["git.status", "git.diff", "git.log"])
        expect((await repo.call(tool)).success).toBe(true);
      expect(existsSync(marker)).toBe(false);
    });
  }

  it("the control: plain git stages a gitlink, and its next status runs the nested repository's program", () => {
    const { repo, marker } = plant("directory");
    repo.git("add", "-A");
    expect(repo.git("ls-files", "-s", "sub")).toMatch(/^160000 /);
    spawnSync("git", ["status"], { cwd: repo.workspace, env: repo.env, stdio: "ignore" });
    expect(readFileSync(marker, "utf8")).toMatch(/uid=/);
  });

  it("after the refusal's fix (its .git removed), git.add stages the files", async () => {
    const { repo } = plant("directory");
    execFileSync("rm", [
      "-rf",
      join(repo.workspace, "sub", ".git"),
      join(repo.workspace, "sub", ".gitattributes"),
    ]);
    const r = await repo.call("git.add", { paths: ["."] });
    expect(r.success, r.summary).toBe(true);
    expect(repo.git("ls-files", "-s", "sub")).toMatch(/^100644 \w+ 0\tsub\/f\n$/);
  });

  it("git.commit refuses a gitlink planted in the index (update-index --cacheinfo), naming it; a gitlink HEAD has is the user's and commits pass", async () => {
    const repo = createRepoWithHistory();
    open.push(repo);
    const head = repo.git("rev-parse", "HEAD").trim();
    const before = head;
    repo.git("update-index", "--add", "--cacheinfo", `160000,${head},planted`);
    repo.write("README.md", "# staged too\n");
    repo.git("add", "README.md");
    const r = await repo.call("git.commit", { message: "with a gitlink" });
    expect(r.success).toBe(false);
    expect(r.summary).toMatch(/git\.commit refused: the index holds a gitlink .* at 'planted'/);
    expect(repo.git("rev-parse", "HEAD").trim()).toBe(before);
    // Committed by the user outside the tools, the gitlink is HEAD's own: later commits go through.
    repo.git("commit", "-q", "-m", "user's submodule");
    repo.write("README.md", "# changed again\n");
    expect((await repo.call("git.add", { paths: ["README.md"] })).success).toBe(true);
    const ok = await repo.call("git.commit", { message: "readme" });
    expect(ok.success, ok.summary).toBe(true);
  });

  it("a gitlink in HEAD to a nested repository with an fsmonitor and a dirty file: status, diff, add and commit run nothing of it", async () => {
    const { repo, marker } = plant("directory");
    repo.git("-c", "core.fsmonitor=false", "add", "sub");
    repo.git("-c", "core.fsmonitor=false", "commit", "-q", "-m", "sub as a gitlink");
    writeFileSync(join(repo.workspace, "sub", "f"), "dirty\n");
    repo.write("README.md", "# changed\n");
    for (const [tool, args] of [
      ["git.status", {}],
      ["git.diff", {}],
      ["git.add", { paths: ["README.md"] }],
      ["git.commit", { message: "readme" }],
      ["git.show", { ref: "HEAD" }],
    ] as const) {
      const r = await repo.call(tool, args);
      expect(r.success, `${tool}: ${r.summary}`).toBe(true);
    }
    expect(existsSync(marker)).toBe(false);
  });
});
