// Round four's red-team breaks B and C, on real git:
// B. git 2.39 does not validate index entry paths when it reads an index, so a crafted
//    entry `../../x` made git.diff print a file outside the workspace.
// C. A FIFO at .git/index (or any file git opens by name in .git) made git block in open():
//    git.status hung until its timeout, and a git left behind by a killed host forever.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { invalidIndexPath } from "@capgate/git-guard";
import { needs } from "@capgate/test-system-parts";
import { DEFAULT_LIMITS, type ToolResult } from "@capgate/tools";
import { afterEach, describe, expect, it } from "vitest";
import { createRepoWithHistory, type GitTestRepo } from "./test-support.js";

const gitPart = needs(["git"]);
const describeGit = (name: string, body: () => void) =>
  describe.skipIf(gitPart.skip)(name + gitPart.note, body);

const open: GitTestRepo[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const r of open.splice(0)) {
    // A FIFO left in place would not hurt rmSync, but a git still blocked on one would.
    await r.close();
  }
});
function repoWithHistory(): GitTestRepo {
  const r = createRepoWithHistory();
  open.push(r);
  return r;
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

/**
 * A call with a per-call limit well under the default, so a git that blocks fails the test
 * with a timeout instead of stalling it for two minutes.
 */
async function outcome(
  repo: GitTestRepo,
  tool: string,
  args: Record<string, unknown> = {},
): Promise<ToolResult> {
  return repo
    .call(tool, args, { limits: { ...DEFAULT_LIMITS, timeoutMs: 15_000 } })
    .catch((error: { code?: string; message?: string }) => ({
      success: false,
      summary: `rejected ${error.code}: ${error.message}`,
    }));
}

/** The SHA-1 trailer git puts after an index's content. */
function withTrailer(content: Buffer): Buffer {
  return Buffer.concat([content, createHash("sha1").update(content).digest()]);
}

/**
 * Plant an index entry named `target`, which git's own commands refuse to add: add a valid
 * entry with a placeholder name of the same byte length (the name length is stored in the
 * entry's flags), swap the bytes, and recompute the SHA-1 trailer — what the red team's
 * evilindex.py did.
 */
function craftEntry(repo: GitTestRepo, target: string, file = join(repo.workspace, ".git", "index")): void {
  swapBytes(file, addPlaceholder(repo, target), target);
}

/** Stage a blob under a placeholder name as long (in bytes) as `target`; the placeholder. */
function addPlaceholder(repo: GitTestRepo, target: string): string {
  const placeholder = "q".repeat(Buffer.byteLength(target));
  repo.git("update-index", "--add", "--cacheinfo", `100644,${repo.hashObject("old\n")},${placeholder}`);
  return placeholder;
}

function swapBytes(file: string, from: string, to: string): void {
  const content = readFileSync(file).subarray(0, -20);
  const at = content.indexOf(from);
  expect(at, `placeholder in ${file}`).toBeGreaterThanOrEqual(0);
  expect(content.indexOf(from, at + 1), "placeholder found once").toBe(-1);
  const swapped = Buffer.concat([
    content.subarray(0, at),
    Buffer.from(to),
    content.subarray(at + from.length),
  ]);
  writeFileSync(file, withTrailer(swapped));
}

describe("invalidIndexPath", () => {
  it("accepts in-tree paths and names what is wrong with the others", () => {
    for (const ok of [
      "a",
      "src/app.ts",
      "..foo",
      "x..y/z",
      ".gitignore",
      ".github/ci.yml",
      "a.git/b",
      "dir with space/é",
    ])
      expect(invalidIndexPath(ok), ok).toBeUndefined();
    expect(invalidIndexPath("")).toBe("an empty path");
    expect(invalidIndexPath("/etc/passwd")).toBe("an absolute path");
    expect(invalidIndexPath("../../root/.ssh/id_x")).toBe("a '..' component");
    expect(invalidIndexPath("a/../../b")).toBe("a '..' component");
    expect(invalidIndexPath("a/./b")).toBe("a '.' component");
    expect(invalidIndexPath("a//b")).toMatch(/empty component/);
    expect(invalidIndexPath("dir/")).toMatch(/empty component/);
    expect(invalidIndexPath(".git/config")).toMatch(/'\.git' component/);
    expect(invalidIndexPath("sub/.GiT/hooks/x")).toMatch(/'\.git' component/);
    expect(invalidIndexPath("a\nb")).toBe("a control character (U+000A)");
    expect(invalidIndexPath("a\u007fb")).toBe("a control character (U+007F)");
  });
});

describeGit("an index entry naming a path outside the work tree is refused", () => {
  it("../secret: plain git shows the outside file; every tool refuses, naming the entry and the fix", async () => {
    const repo = repoWithHistory();
    // The workspace is <root>/ws, so "../secret.txt" is a file beside it.
    writeFileSync(join(repo.root, "secret.txt"), "OUTSIDE-SECRET\n");
    craftEntry(repo, "../secret.txt");
    // Control: without the check, git reads the file the entry names.
    expect(repo.git("diff"), "the attack itself works").toContain("OUTSIDE-SECRET");
    for (const [tool, args] of CALLS) {
      const r = await outcome(repo, tool, args);
      expect(r.success, `${tool}: ${r.summary}`).toBe(false);
      expect(r.summary, tool).toContain(`index has an entry "../secret.txt"`);
      expect(r.summary, tool).toContain("(a '..' component)");
      expect(r.summary, tool).toContain("`rm .git/index && git reset`");
      expect(JSON.stringify(r), tool).not.toContain("OUTSIDE-SECRET");
    }
    // The fix the message names works, and the tools run again.
    rmSync(join(repo.workspace, ".git", "index"));
    repo.git("reset", "-q");
    const after = await outcome(repo, "git.diff");
    expect(after.success, after.summary).toBe(true);
  });

  it.each([
    ["/etc/hostname", "an absolute path"],
    ["src/./app.ts", "a '.' component"],
    ["src//app.ts", "an empty component"],
    [".GIT/config", "a '.git' component"],
    ["sub/.git/HEAD", "a '.git' component"],
    ["ctl\u0001name", "a control character (U+0001)"],
  ])("%j is refused (%s)", async (target, why) => {
    const repo = repoWithHistory();
    craftEntry(repo, target);
    const r = await outcome(repo, "git.status");
    expect(r.success, r.summary).toBe(false);
    expect(r.summary).toContain(`index has an entry ${JSON.stringify(target)}`);
    expect(r.summary).toContain(why);
  });

  it("an entry crafted in a split index's shared index is seen too (git reads both)", async () => {
    const repo = repoWithHistory();
    writeFileSync(join(repo.root, "secret.txt"), "OUTSIDE-SECRET\n");
    const target = "../secret.txt";
    const placeholder = addPlaceholder(repo, target);
    repo.git("update-index", "--split-index");
    const gitDir = join(repo.workspace, ".git");
    const shared = readdirSync(gitDir).find((n) => n.startsWith("sharedindex."));
    expect(shared, "git wrote a shared index").toBeDefined();
    // Rewrite the shared index; rename it after its new hash and point the index's link
    // extension at that name (git checks both), then fix the index's own trailer.
    const oldHash = shared!.slice("sharedindex.".length);
    swapBytes(join(gitDir, shared!), placeholder, target);
    const newHash = readFileSync(join(gitDir, shared!)).subarray(-20).toString("hex");
    renameSync(join(gitDir, shared!), join(gitDir, `sharedindex.${newHash}`));
    const index = readFileSync(join(gitDir, "index")).subarray(0, -20);
    const at = index.indexOf(Buffer.from(oldHash, "hex"));
    expect(at).toBeGreaterThan(0);
    Buffer.from(newHash, "hex").copy(index, at);
    writeFileSync(join(gitDir, "index"), withTrailer(index));
    expect(repo.git("diff"), "the attack itself works").toContain("OUTSIDE-SECRET");

    const r = await outcome(repo, "git.diff");
    expect(r.success, r.summary).toBe(false);
    expect(r.summary).toContain(`index has an entry "../secret.txt"`);
    expect(r.summary).not.toContain("OUTSIDE-SECRET");
  });

  it("valid look-alike names pass, and an index changed since the last check is checked again", async () => {
    const repo = repoWithHistory();
    for (const name of ["..foo", "x..y/z.txt", ".gitignore", ".github/ci.yml", "a.git/b.txt"]) {
      repo.write(name, "x\n");
      repo.git("add", "--", name);
    }
    const clean = await outcome(repo, "git.status");
    expect(clean.success, clean.summary).toBe(true);
    expect(clean.summary).toContain("a.git/b.txt");
    craftEntry(repo, "../x.txt");
    const r = await outcome(repo, "git.status");
    expect(r.success).toBe(false);
    expect(r.summary).toContain(`"../x.txt"`);
  });
});

describeGit("special files in .git are refused before git opens them", () => {
  const mkfifo = (path: string) => execFileSync("mkfifo", [path]);

  it("a FIFO at .git/index: plain git blocks on it; every tool refuses at once, naming it and the fix", async () => {
    const repo = repoWithHistory();
    const index = join(repo.workspace, ".git", "index");
    rmSync(index);
    mkfifo(index);
    // Control: the user's own git status blocks in open() (stopped here after 2 s).
    const plain = spawnSync("git", ["status"], { cwd: repo.workspace, env: repo.env, timeout: 2_000 });
    expect(plain.error?.message ?? "", "plain git blocks").toMatch(/ETIMEDOUT/);
    for (const [tool, args] of CALLS) {
      const r = await outcome(repo, tool, args);
      expect(r.success, `${tool}: ${r.summary}`).toBe(false);
      expect(r.summary, tool).toContain("'.git/index' is a named pipe (FIFO), not a regular file");
      expect(r.summary, tool).toContain("`rm .git/index && git reset`");
    }
  });

  it.each([
    "HEAD",
    "packed-refs",
    "ORIG_HEAD",
    "MERGE_HEAD",
    "shallow",
    "sharedindex.0123456789abcdef0123456789abcdef01234567",
    "info/exclude",
    "refs/heads/feature",
    "logs/HEAD",
    "rebase-merge/head-name",
    "worktrees/other/HEAD",
  ])("a FIFO at .git/%s is refused, naming it", async (name) => {
    const repo = repoWithHistory();
    const path = join(repo.workspace, ".git", name);
    mkdirSync(join(path, ".."), { recursive: true });
    rmSync(path, { force: true });
    mkfifo(path);
    const r = await outcome(repo, "git.status");
    expect(r.success, r.summary).toBe(false);
    expect(r.summary).toContain(`'.git/${name}' is a named pipe (FIFO), not a regular file`);
  });

  it("a socket, and a link to a FIFO in the work tree, are refused; git's fsmonitor socket is not", async () => {
    const repo = repoWithHistory();
    const gitDir = join(repo.workspace, ".git");
    const listen = async (path: string) => {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((r) => server.listen(path, r));
    };
    await listen(join(gitDir, "fsmonitor--daemon.ipc"));
    const fine = await outcome(repo, "git.status");
    expect(fine.success, fine.summary).toBe(true);

    await listen(join(gitDir, "FETCH_HEAD"));
    const socket = await outcome(repo, "git.status");
    expect(socket.summary).toContain("'.git/FETCH_HEAD' is a socket, not a regular file");
    await new Promise((r) => servers.pop()!.close(r));

    mkfifo(join(repo.workspace, "pipe"));
    symlinkSync("../pipe", join(gitDir, "ORIG_HEAD"));
    const linked = await outcome(repo, "git.status");
    expect(linked.success).toBe(false);
    expect(linked.summary).toContain("'.git/ORIG_HEAD' is a symbolic link to a named pipe (FIFO)");
  });

  it("a FIFO in a loose-object folder or under modules/ is not the guard's to find (left to the sandbox)", async () => {
    const repo = repoWithHistory();
    mkdirSync(join(repo.workspace, ".git", "modules", "m"), { recursive: true });
    mkfifo(join(repo.workspace, ".git", "modules", "m", "HEAD"));
    mkdirSync(join(repo.workspace, ".git", "objects", "ff"), { recursive: true });
    mkfifo(join(repo.workspace, ".git", "objects", "ff", "0".repeat(38)));
    const r = await outcome(repo, "git.status");
    expect(r.success, r.summary).toBe(true);
  });
});
