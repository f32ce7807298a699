import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import type { ToolResult } from "@capgate/tools";
import { afterEach, describe, expect, it } from "vitest";
import { createRepo, createRepoWithHistory, type GitTestRepo } from "./test-support.js";

// These drive real git: skipped (the reason in the name) where git is missing, failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const gitPart = needs(["git"]);
const describeGit = (name: string, body: () => void) =>
  describe.skipIf(gitPart.skip)(name + gitPart.note, body);

// Each test builds a workspace whose repository metadata (which the model can write)
// points git outside the workspace or at a program, plus an OUTSIDE repository that must
// come out byte-identical, and a marker file that a program run by git would create.

const open: GitTestRepo[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});
const track = (r: GitTestRepo) => {
  open.push(r);
  return r;
};

/** Hash of a whole tree: names, types, modes, link targets and file bytes (`.git` included). */
function treeHash(dir: string): string {
  const hash = createHash("sha256");
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const info = lstatSync(full);
      hash.update(`${full}\0${info.mode}\0`);
      if (info.isSymbolicLink()) hash.update(readlinkSync(full));
      else if (info.isDirectory()) walk(full);
      else hash.update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest("hex");
}

/** The eight tools, each with arguments that would touch the repository. */
const CALLS: [string, Record<string, unknown>][] = [
  ["git.status", {}],
  ["git.diff", {}],
  ["git.log", {}],
  ["git.show", { ref: "HEAD" }],
  ["git.add", { paths: ["README.md"] }],
  ["git.commit", { message: "from the tool" }],
  ["git.branch", { name: "made-by-tool" }],
  ["git.checkout", { ref: "made-by-tool-2", create: true }],
];

async function outcome(repo: GitTestRepo, tool: string, args: Record<string, unknown>): Promise<ToolResult> {
  return repo.call(tool, args).catch((error: { code?: string; message?: string }) => ({
    success: false,
    summary: `rejected ${error.code}: ${error.message}`,
  }));
}

/** Every tool call fails with a message matching `why`; the outside repository is untouched. */
async function expectAllRefused(repo: GitTestRepo, outside: GitTestRepo, why: RegExp): Promise<void> {
  const before = treeHash(outside.root);
  for (const [tool, args] of CALLS) {
    const r = await outcome(repo, tool, args);
    expect(r.success, `${tool}: ${r.summary}`).toBe(false);
    expect(r.summary, tool).toMatch(why);
  }
  expect(treeHash(outside.root)).toBe(before);
}

/** A script that appends its name to `marker` and passes stdin through (a working filter). */
function markerScript(repo: GitTestRepo, name: string, marker: string): string {
  const file = join(repo.root, name);
  writeFileSync(file, `#!/bin/sh\necho ${name} >> '${marker}'\ncat\n`);
  chmodSync(file, 0o755);
  return file;
}

describeGit("metadata pointing outside the workspace is refused, naming it", () => {
  it("a .git file with gitdir: pointing at another repository", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepo({ init: false }));
    repo.write("README.md", "# in the workspace\n");
    writeFileSync(join(repo.workspace, ".git"), `gitdir: ${join(outside.workspace, ".git")}\n`);
    await expectAllRefused(
      repo,
      outside,
      /'\.git' in the workspace is a file pointing git at '.*outside|is a file pointing git at/,
    );
  });

  it("a .git symlink to another repository", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepo({ init: false }));
    repo.write("README.md", "# in the workspace\n");
    symlinkSync(join(outside.workspace, ".git"), join(repo.workspace, ".git"));
    await expectAllRefused(repo, outside, /'\.git' in the workspace is a symbolic link/);
  });

  it("core.worktree in .git/config", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    repo.git("config", "core.worktree", outside.workspace);
    await expectAllRefused(repo, outside, /sets 'core\.worktree = .*outside the workspace/);
  });

  it("objects/info/alternates borrowing another repository's objects", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    writeFileSync(
      join(repo.workspace, ".git/objects/info/alternates"),
      `${join(outside.workspace, ".git/objects")}\n`,
    );
    await expectAllRefused(repo, outside, /'\.git\/objects\/info\/alternates' borrows objects from '.*'/);
    // The host's GIT_ALTERNATE_OBJECT_DIRECTORIES is dropped, not obeyed.
    const clean = track(createRepoWithHistory());
    outside.write("secret.txt", "outside only\n");
    outside.git("add", "secret.txt");
    outside.git("commit", "-q", "-m", "Outside only");
    const secret = outside.git("rev-parse", "HEAD").trim();
    const env = { ...clean.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: join(outside.workspace, ".git/objects") };
    const shown = await clean.call("git.show", { ref: secret }, { env });
    expect(shown.success).toBe(false);
    expect(shown.summary).not.toContain("outside only");
  });

  it("FIFOs planted as metadata files are refused at once, never read", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    execFileSync("mkfifo", [join(repo.workspace, ".git/objects/info/alternates")]);
    await expectAllRefused(
      repo,
      outside,
      /'\.git\/objects\/info\/alternates' is a named pipe \(FIFO\).*Remove it/,
    );
    rmSync(join(repo.workspace, ".git/objects/info/alternates"));
    execFileSync("mkfifo", [join(repo.workspace, ".git/commondir")]);
    await expectAllRefused(repo, outside, /'\.git\/commondir' is a named pipe/);
  });

  it("a .git/commondir pointing at another repository", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    writeFileSync(join(repo.workspace, ".git/commondir"), `${join(outside.workspace, ".git")}\n`);
    await expectAllRefused(repo, outside, /'\.git\/commondir' points git at '.*', outside the workspace/);
  });

  it("a symlink inside .git leading out (objects → another object store)", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    renameSync(join(repo.workspace, ".git/objects"), join(repo.root, "own-objects"));
    symlinkSync(join(outside.workspace, ".git/objects"), join(repo.workspace, ".git/objects"));
    await expectAllRefused(
      repo,
      outside,
      /'\.git\/objects' is a symbolic link to '.*', outside the workspace/,
    );
  });

  it("a reflog or ref that is a symlink leading out (git.commit would append there, git.branch create there)", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    const target = join(outside.workspace, "appended-by-reflog");
    writeFileSync(target, "outside\n");
    rmSync(join(repo.workspace, ".git/logs/HEAD"), { force: true });
    symlinkSync(target, join(repo.workspace, ".git/logs/HEAD"));
    await expectAllRefused(
      repo,
      outside,
      /'\.git\/logs\/HEAD' is a symbolic link to '.*', outside the workspace/,
    );
    expect(readFileSync(target, "utf8")).toBe("outside\n");

    const other = track(createRepoWithHistory());
    const refsOut = join(outside.root, "refs-out");
    mkdirSync(refsOut, { recursive: true });
    renameSync(join(other.workspace, ".git/refs/heads"), join(other.root, "own-heads"));
    symlinkSync(refsOut, join(other.workspace, ".git/refs/heads"));
    await expectAllRefused(
      other,
      outside,
      /'\.git\/refs\/heads' is a symbolic link to '.*', outside the workspace/,
    );
    expect(readdirSync(refsOut)).toEqual([]);
  });

  it("include.path and includeIf pulling config from another file", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    const marker = join(repo.root, "ran.log");
    const script = markerScript(repo, "prog", marker);
    const extra = join(repo.root, "extra.gitconfig");
    writeFileSync(extra, `[core]\n\tfsmonitor = ${script}\n[filter "x"]\n\tclean = ${script}\n`);
    repo.git("config", "include.path", extra);
    repo.write("README.md", "# changed\n");
    await expectAllRefused(repo, outside, /sets 'include\.path = .*pulls in configuration from another file/);
    repo.git("config", "--unset", "include.path");
    repo.git("config", `includeIf.gitdir:${repo.workspace}/.path`, extra);
    await expectAllRefused(repo, outside, /sets 'includeif\..*\.path = .*pulls in configuration/i);
    expect(existsSync(marker)).toBe(false);
  });
});

describe.skipIf(gitPart.skip)(
  "metadata the sandbox protects is refused when planted, inside the workspace too" + gitPart.note,
  {
    timeout: 60_000,
  },
  () => {
    // The same entries the sandbox makes read-only (PROTECTED_GIT_ENTRIES): a model that ran
    // with the sandbox off, or a repository handed over as is, must not steer the git tools.
    it("a .git/commondir naming a model-written repository inside the workspace", async () => {
      const outside = track(createRepoWithHistory());
      const repo = track(createRepoWithHistory());
      const evil = join(repo.workspace, "evil");
      execFileSync("cp", ["-r", join(repo.workspace, ".git"), evil]);
      const marker = join(repo.root, "fsmonitor-ran");
      writeFileSync(join(evil, "config"), `[core]\n\tfsmonitor = touch '${marker}'\n\thooksPath = hooks\n`);
      writeFileSync(join(repo.workspace, ".git/commondir"), "../evil\n");
      await expectAllRefused(repo, outside, /'\.git\/commondir' points git at '.*evil'.*so it was planted/);
      expect(existsSync(marker)).toBe(false);
    });

    it("a .git/commondir naming the repository itself (the sandbox's placeholder) changes nothing and passes", async () => {
      const repo = track(createRepoWithHistory());
      writeFileSync(join(repo.workspace, ".git/commondir"), ".\n");
      const r = await repo.call("git.log", {});
      expect(r.success, r.summary).toBe(true);
      expect(r.summary).toContain("Add app");
    });

    it.each([
      ["config", "file"],
      ["config.worktree", "file"],
      ["hooks", "dir"],
      ["modules", "dir"],
      ["worktrees", "dir"],
      ["objects/info", "dir"],
    ])("a symbolic link at .git/%s, even one that stays inside the workspace", async (entry, kind) => {
      const outside = track(createRepoWithHistory());
      const repo = track(createRepoWithHistory());
      const inside = join(repo.workspace, `model-${entry.replace("/", "-")}`);
      const real = join(repo.workspace, ".git", entry);
      if (existsSync(real)) renameSync(real, inside);
      else if (kind === "dir") mkdirSync(inside);
      else writeFileSync(inside, "");
      symlinkSync(inside, real);
      const escaped = entry.replace(/[./]/g, (c) => `\\${c}`);
      await expectAllRefused(
        repo,
        outside,
        new RegExp(`'\\.git\\/${escaped}' is a symbolic link .*Replace the link`),
      );
    });

    it("config.worktree is checked like config (include, core.worktree, drivers)", async () => {
      const outside = track(createRepoWithHistory());
      const repo = track(createRepoWithHistory());
      writeFileSync(
        join(repo.workspace, ".git/config.worktree"),
        `[core]\n\tworktree = ${outside.workspace}\n`,
      );
      await expectAllRefused(repo, outside, /'\.git\/config\.worktree' sets 'core\.worktree/);
    });
  },
);

describeGit("programs the repository configures never run", () => {
  it("filter clean/smudge/process drivers never run; staging or checking out a filtered file is refused, naming it", async () => {
    const outside = track(createRepoWithHistory());
    const repo = track(createRepoWithHistory());
    const marker = join(repo.root, "ran.log");
    const script = markerScript(repo, "filter", marker);
    // A branch whose README differs, to check out later.
    repo.git("checkout", "-q", "-b", "other");
    repo.write("README.md", "# other\n");
    repo.git("commit", "-q", "-am", "other readme");
    repo.git("checkout", "-q", "main");
    repo.git("config", "filter.evil.clean", script);
    repo.git("config", "filter.evil.smudge", script);
    repo.git("config", "filter.evil.required", "true");
    repo.git("config", "filter.Proc.process", script);
    repo.git("config", "filter.Proc.required", "true");
    repo.write(".gitattributes", "*.md filter=evil\n*.txt filter=Proc\n");
    repo.write("README.md", "# filtered?\n");
    repo.write("notes.txt", "text\n");
    const before = treeHash(outside.root);
    for (const [tool, args] of CALLS) await outcome(repo, tool, args);
    const add = await repo.call("git.add", { paths: ["."] });
    expect(add.success).toBe(false);
    expect(add.summary).toMatch(
      /^git\.add refused: 2 files \(README\.md, notes\.txt\) use the filter drivers 'evil', 'Proc'/,
    );
    const plain = await repo.call("git.add", { paths: [".gitattributes"] });
    expect(plain.success, plain.summary).toBe(true);
    const branchBefore = repo.git("branch", "--show-current");
    const co = await repo.call("git.checkout", { ref: "other" });
    expect(co.success).toBe(false);
    expect(co.summary).toMatch(/^git\.checkout refused: 1 file \(README\.md\) uses the filter driver 'evil'/);
    expect(repo.git("branch", "--show-current")).toBe(branchBefore);
    expect(repo.git("diff", "--cached", "--name-only", "--no-ext-diff")).toBe(".gitattributes\n");
    expect(existsSync(marker)).toBe(false);
    expect(treeHash(outside.root)).toBe(before);

    // Control: plain git in the same repository runs the driver, so the check above can fail.
    repo.git("add", "README.md");
    expect(readFileSync(marker, "utf8")).toMatch(/filter/);
  });

  it("textconv, diff and merge drivers, sshCommand, pager and fsmonitor are not run", async () => {
    const repo = track(createRepoWithHistory());
    const marker = join(repo.root, "ran.log");
    const script = markerScript(repo, "prog", marker);
    repo.git("config", "diff.conv.textconv", script);
    repo.git("config", "diff.conv.command", script);
    repo.git("config", "merge.conv.driver", script);
    repo.git("config", "diff.external", script);
    repo.git("config", "core.sshCommand", script);
    repo.git("config", "core.pager", script);
    repo.git("config", "pager.log", script);
    repo.git("config", "core.fsmonitor", script);
    repo.git("config", "credential.helper", `!${script}`);
    repo.git("config", "protocol.ext.allow", "always");
    repo.write(".gitattributes", "*.md diff=conv merge=conv\n");
    repo.write("README.md", "# changed\n");
    expect((await repo.call("git.diff")).summary).toContain("+# changed");
    for (const [tool, args] of CALLS) await outcome(repo, tool, args);
    expect((await repo.call("git.show", { ref: "HEAD" })).success).toBe(true);
    expect(existsSync(marker)).toBe(false);
    // Control: plain git uses the textconv driver.
    repo.write("README.md", "# once more\n");
    repo.git("diff");
    expect(readFileSync(marker, "utf8")).toMatch(/prog/);
  });

  it("a driver name git cannot be told to ignore, and a config-defined hook, are refused, naming the setting", async () => {
    const repo = track(createRepoWithHistory());
    const marker = join(repo.root, "ran.log");
    const script = markerScript(repo, "prog", marker);
    repo.git("config", "filter.a=b.clean", script);
    repo.write(".gitattributes", "*.md filter=a=b\n");
    const r = await repo.call("git.status");
    expect(r.success).toBe(false);
    expect(r.summary).toContain("filter.a=b.clean");
    repo.git("config", "--unset", "filter.a=b.clean");
    // Hooks defined in config (newer git) are refused outright, whatever core.hooksPath says.
    repo.git("config", "hook.linter.command", script);
    repo.git("config", "hook.linter.event", "pre-commit");
    const hook = await repo.call("git.status");
    expect(hook.success).toBe(false);
    expect(hook.summary).toContain("sets 'hook.linter.command', a hook defined in config");
    expect(existsSync(marker)).toBe(false);
  });
});

describeGit("what the operator's own config still gives", () => {
  it("the global identity is used when the repository sets none; nothing else from the global file applies", async () => {
    const repo = track(createRepoWithHistory());
    repo.git("config", "--unset", "user.name");
    repo.git("config", "--unset", "user.email");
    const marker = join(repo.root, "ran.log");
    const script = markerScript(repo, "hook", marker);
    writeFileSync(
      join(repo.root, "home", ".gitconfig"),
      `[user]\n\tname = Global Person\n\temail = global@example.com\n[core]\n\tfsmonitor = ${script}\n\thooksPath = ${repo.root}\n`,
    );
    repo.write("README.md", "# by global\n");
    await repo.call("git.add", { paths: ["README.md"] });
    const r = await repo.call("git.commit", { message: "global identity" });
    expect(r.success, r.summary).toBe(true);
    expect(repo.git("log", "-1", "--format=%an <%ae>").trim()).toBe("Global Person <global@example.com>");
    expect(existsSync(marker)).toBe(false);
  });
});
