// Every git metadata entry that makes git run a program or read config, hooks or objects
// from elsewhere (PROTECTED_GIT_ENTRIES), attacked from a real sandboxed command; then the
// host's plain git (hooks on, the repository's config read) runs `git status` and
// `git commit` and must run nothing the command wrote. A control run with the sandbox off
// shows each attack works when nothing stops it, so these tests can fail.
// CI sets CAPGATE_REQUIRE_SYSTEM_TESTS=1: a missing bwrap fails there instead of skipping.
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import type { ShellPolicyConfig } from "@capgate/tools";
import { PROTECTED_GIT_ENTRIES } from "@capgate/workspace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runShell } from "./run-shell.js";
import { closeEgressProxies } from "./sandbox-proxy.js";
import type { ShellCheck } from "./shell-check.js";

// Skipped (the reason in the name) without a working bubblewrap or git; failing under CAPGATE_REQUIRE_SYSTEM_TESTS.
const system = needs(["bwrap", "git"]);
// The sandbox is under test here, not the shell policy: every command line is let through.
const check: ShellCheck = async () => ({ decision: "allow" });

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-sbx-git-")));
const home = join(root, "home");
const marks = join(root, "marks");
/** The user's git on the host: hooks on, repository config read, no global or system config. */
const hostEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "User",
  GIT_AUTHOR_EMAIL: "user@example.com",
  GIT_COMMITTER_NAME: "User",
  GIT_COMMITTER_EMAIL: "user@example.com",
  LANG: "C",
};
const OFF: ShellPolicyConfig = { sandbox: "off" };
const NO_NET: ShellPolicyConfig = { network: "none" };

let n = 0;
function repo(): string {
  const ws = join(root, `ws${++n}`);
  mkdirSync(ws);
  hostGit(ws, "init", "-q");
  writeFileSync(join(ws, "README.md"), "hello\n");
  hostGit(ws, "add", "README.md");
  hostGit(ws, "commit", "-qm", "init");
  return ws;
}

function hostGit(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: hostEnv,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** The host's plain git, as the user would run it after the command: status, then a commit. */
function userGitAfterwards(ws: string): void {
  spawnSync("git", ["status", "--short"], { cwd: ws, env: hostEnv, stdio: "ignore" });
  writeFileSync(join(ws, "README.md"), `edit ${Math.random()}\n`);
  spawnSync("git", ["commit", "-qam", "after"], { cwd: ws, env: hostEnv, stdio: "ignore" });
}

function mark(name: string): string {
  return join(marks, name);
}

async function sh(ws: string, command: string, policy: ShellPolicyConfig = NO_NET) {
  return runShell({
    command,
    check,
    cwd: ws,
    env: { PATH: hostEnv.PATH, HOME: home, LANG: "C", MARK: marks },
    policy,
    sandbox: { workspace: ws },
    timeoutMs: 30_000,
  });
}

/** A model-written repository directory `evil` in the workspace whose config and hooks touch `name`. */
function evilRepoScript(name: string): string {
  return [
    "mkdir -p evil/hooks",
    "cp -r .git/HEAD .git/objects .git/refs evil/ 2>/dev/null",
    `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch "${marks}/${name}-fsmonitor"\\n' > evil/config`,
    `printf '#!/bin/sh\\ntouch "${marks}/${name}-hook"\\n' > evil/hooks/pre-commit`,
    "chmod +x evil/hooks/pre-commit",
  ].join("; ");
}

/** Every entry under .git except the files git rewrites on every status or commit. */
function snapshotGit(ws: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const rel = `${prefix}${entry.name}`;
      out.push(
        entry.isDirectory()
          ? `${rel}/`
          : `${rel}:${entry.isFile() ? readFileSync(join(dir, entry.name), "utf8").length : "link"}`,
      );
      if (entry.isDirectory() && entry.name !== "objects") walk(join(dir, entry.name), `${rel}/`);
    }
  };
  const gitDir = existsSync(join(ws, ".repo")) ? join(ws, ".repo") : join(ws, ".git");
  walk(gitDir, "");
  return out.filter((e) => !/^(index|logs\/|COMMIT_EDITMSG|ORIG_HEAD)/.test(e)).sort();
}

function ranAnything(name: string): boolean {
  return existsSync(mark(`${name}-fsmonitor`)) || existsSync(mark(`${name}-hook`));
}

beforeAll(() => {
  mkdirSync(home);
  mkdirSync(marks);
});

afterAll(async () => {
  await closeEgressProxies();
  rmSync(root, { recursive: true, force: true });
});

describe("the protected entries", () => {
  it("cover what gitrepository-layout(5) lists as running programs or pointing elsewhere", () => {
    expect(PROTECTED_GIT_ENTRIES.map((e) => e.path).sort()).toEqual(
      [
        "branches",
        "commondir",
        "config",
        "config.worktree",
        "hooks",
        "modules",
        "objects/info/alternates",
        "remotes",
        "worktrees",
      ].sort(),
    );
  });
});

interface Attack {
  name: string;
  /** A fresh workspace set up as the user has it, and where the user's git runs afterwards. */
  setup(): { ws: string; userDirs: string[] };
  /** The command: plants config or hooks that touch `${name}-fsmonitor` / `${name}-hook`. */
  script(name: string, ws: string): string;
}

function linkedWorktree(): { ws: string; userDirs: string[] } {
  const ws = repo();
  const linked = join(root, `linked${n}`);
  hostGit(ws, "worktree", "add", "-q", linked);
  return { ws, userDirs: [linked, ws] };
}

function withSubmodule(): { ws: string; userDirs: string[] } {
  const lib = repo();
  const ws = repo();
  execFileSync("git", ["-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub"], {
    cwd: ws,
    env: hostEnv,
    stdio: "ignore",
  });
  hostGit(ws, "commit", "-qm", "add sub");
  return { ws, userDirs: [ws] };
}

const fsmonitor = (name: string) => `\\tfsmonitor = touch ${marks}/${name}-fsmonitor\\n`;
const hook = (name: string) => `'#!/bin/sh\\ntouch ${marks}/${name}-hook\\n'`;

const ATTACKS: Attack[] = [
  {
    name: "commondir",
    setup: () => ({ ws: repo(), userDirs: [] }),
    script: (name) => `${evilRepoScript(name)}; printf '../evil\\n' > .git/commondir`,
  },
  {
    name: "config-worktree",
    setup: () => {
      const ws = repo();
      hostGit(ws, "config", "core.repositoryformatversion", "1");
      hostGit(ws, "config", "extensions.worktreeConfig", "true");
      return { ws, userDirs: [] };
    },
    script: (name) => `printf '[core]\\n${fsmonitor(name)}' > .git/config.worktree`,
  },
  {
    name: "worktrees",
    setup: linkedWorktree,
    script: (name, ws) => {
      const admin = `.git/worktrees/linked${ws.slice(ws.lastIndexOf("ws") + 2)}`;
      return `${evilRepoScript(name)}; printf '../../../evil\\n' > ${admin}/commondir`;
    },
  },
  {
    name: "worktree-config",
    setup: () => {
      const dirs = linkedWorktree();
      hostGit(dirs.ws, "config", "core.repositoryformatversion", "1");
      hostGit(dirs.ws, "config", "extensions.worktreeConfig", "true");
      return dirs;
    },
    script: (name, ws) => {
      const admin = `.git/worktrees/linked${ws.slice(ws.lastIndexOf("ws") + 2)}`;
      return `printf '[core]\\n${fsmonitor(name)}' > ${admin}/config.worktree`;
    },
  },
  {
    name: "modules",
    setup: withSubmodule,
    script: (name) =>
      `printf '[core]\\n${fsmonitor(name)}' >> .git/modules/sub/config; printf ${hook(name)} > .git/modules/sub/hooks/pre-commit; chmod +x .git/modules/sub/hooks/pre-commit`,
  },
  {
    name: "missing-config",
    setup: () => {
      const ws = repo();
      rmSync(join(ws, ".git", "config"));
      return { ws, userDirs: [] };
    },
    script: (name) => `printf '[core]\\n${fsmonitor(name)}' > .git/config`,
  },
  {
    name: "hooks",
    setup: () => ({ ws: repo(), userDirs: [] }),
    script: (name) => `printf ${hook(name)} > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
  },
  {
    name: "separate-gitdir",
    setup: () => {
      const ws = join(root, `ws${++n}`);
      mkdirSync(ws);
      execFileSync("git", ["init", "-q", "--separate-git-dir", join(ws, ".repo"), ws], { env: hostEnv });
      writeFileSync(join(ws, "README.md"), "hello\n");
      hostGit(ws, "add", "README.md");
      hostGit(ws, "commit", "-qm", "init");
      return { ws, userDirs: [] };
    },
    script: (name) =>
      `printf ${hook(name)} > .repo/hooks/pre-commit; chmod +x .repo/hooks/pre-commit; printf '[core]\\n${fsmonitor(name)}' >> .repo/config`,
  },
];

// Real git and bubblewrap several times per test: generous, so a loaded machine is not a failure.
describe.skipIf(system.skip)(
  "git metadata a sandboxed command cannot write" + system.note,
  { timeout: 120_000 },
  () => {
    it.each(ATTACKS.map((a) => [a.name, a] as const))(
      "%s: planted with the sandbox off, the user's git runs it (control); sandboxed, it runs nothing",
      async (name, attack) => {
        const control = attack.setup();
        await sh(control.ws, attack.script(`${name}-control`, control.ws), OFF);
        for (const dir of [...control.userDirs, control.ws]) userGitAfterwards(dir);
        expect(ranAnything(`${name}-control`), "the attack itself works").toBe(true);

        const target = attack.setup();
        const before = snapshotGit(target.ws);
        const r = await sh(target.ws, attack.script(name, target.ws));
        expect(r.stderr).toMatch(/Read-only file system/);
        // Nothing under .git changed, and no placeholder is left behind.
        expect(snapshotGit(target.ws)).toEqual(before);
        for (const dir of [...target.userDirs, target.ws]) userGitAfterwards(dir);
        expect(ranAnything(name)).toBe(false);
        expect(hostGit(target.ws, "log", "-1", "--format=%s")).toBe("after\n");
      },
    );

    it('git inside the sandbox still works with the placeholders (commondir ".", empty config.worktree)', async () => {
      const ws = repo();
      const r = await sh(
        ws,
        "git status --short; echo new > new.txt; git add new.txt; git -c user.name=M -c user.email=m@x commit -qm model; git log --format=%s",
      );
      expect(r.stdout).toBe("model\ninit\n");
      expect(existsSync(join(ws, ".git", "commondir"))).toBe(false);
      expect(existsSync(join(ws, ".git", "config.worktree"))).toBe(false);
      expect(hostGit(ws, "log", "--format=%s")).toBe("model\ninit\n");
    });

    it("the user's git works on the host while a command runs (the commondir placeholder holds '.')", async () => {
      const ws = repo();
      const running = sh(
        ws,
        "touch started; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done",
      );
      for (let i = 0; i < 600 && !existsSync(join(ws, "started")); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(readFileSync(join(ws, ".git", "commondir"), "utf8")).toBe(".\n");
      expect(hostGit(ws, "log", "--format=%s")).toBe("init\n");
      writeFileSync(join(ws, "go"), "");
      expect((await running).exitCode).toBe(0);
      expect(existsSync(join(ws, ".git", "commondir"))).toBe(false);
    });

    it("an existing .git/commondir and config.worktree stay as they are", async () => {
      const ws = repo();
      writeFileSync(join(ws, ".git", "commondir"), ".\n");
      writeFileSync(join(ws, ".git", "config.worktree"), "[user]\n\tname = Kept\n");
      const r = await sh(
        ws,
        `${evilRepoScript("existing")}; printf '../evil\\n' > .git/commondir; echo x >> .git/config.worktree`,
      );
      expect(r.stderr).toMatch(/commondir: Read-only file system/);
      expect(r.stderr).toMatch(/config\.worktree: Read-only file system/);
      expect(readFileSync(join(ws, ".git", "commondir"), "utf8")).toBe(".\n");
      expect(readFileSync(join(ws, ".git", "config.worktree"), "utf8")).toBe("[user]\n\tname = Kept\n");
      userGitAfterwards(ws);
      expect(ranAnything("existing")).toBe(false);
    });

    it("a missing .git/worktrees or .git/modules cannot be created; the placeholders are gone afterwards", async () => {
      const ws = repo();
      const r = await sh(
        ws,
        `mkdir -p .git/worktrees/x .git/modules/sub/hooks; echo x > .git/modules/sub/config; ls -A .git/worktrees .git/modules`,
      );
      expect(r.stderr).toMatch(/Read-only file system/);
      expect(existsSync(join(ws, ".git", "worktrees"))).toBe(false);
      expect(existsSync(join(ws, ".git", "modules"))).toBe(false);
    });

    it("objects/info/alternates cannot be planted, and .git/objects cannot be moved aside to plant it", async () => {
      const ws = repo();
      const r = await sh(
        ws,
        [
          "mkdir -p evil-objects",
          'echo "$PWD/evil-objects" > .git/objects/info/alternates',
          "mv .git/objects .git/objects-aside",
          "mv .git/objects/info .git/objects/info-aside",
        ].join("; "),
      );
      expect(r.stderr).toMatch(/alternates: Read-only file system/);
      expect(r.stderr).toMatch(/cannot move '\.git\/objects'.*(busy|not permitted|Read-only)/i);
      expect(r.stderr).toMatch(/cannot move '\.git\/objects\/info'.*(busy|not permitted|Read-only)/i);
      expect(existsSync(join(ws, ".git", "objects", "info", "alternates"))).toBe(false);
      expect(existsSync(join(ws, ".git", "objects-aside"))).toBe(false);
      expect(hostGit(ws, "log", "--format=%s")).toBe("init\n");
    });

    it("legacy remote files (.git/remotes, .git/branches) cannot be planted", async () => {
      const ws = repo();
      const r = await sh(
        ws,
        "mkdir -p .git/remotes; echo 'URL: ext::sh -c touch% /tmp/x' > .git/remotes/origin; echo /x > .git/branches/origin",
      );
      expect(r.stderr).toMatch(/Read-only file system/);
      expect(existsSync(join(ws, ".git", "remotes", "origin"))).toBe(false);
      expect(existsSync(join(ws, ".git", "branches", "origin"))).toBe(false);
    });

    it("a .git that is a symbolic link, or a link at a protected name, is refused before anything runs", async () => {
      const ws = repo();
      const linked = join(root, `linkrepo${n}`);
      execFileSync("mv", [join(ws, ".git"), linked]);
      symlinkSync(linked, join(ws, ".git"));
      const r = sh(ws, "touch ran");
      await expect(r).rejects.toMatchObject({ code: "unsafe_repository" });
      await expect(r).rejects.toThrow(/'\.git' is a symbolic link/);
      expect(existsSync(join(ws, "ran"))).toBe(false);

      const ws2 = repo();
      mkdirSync(join(ws2, "githooks"));
      rmSync(join(ws2, ".git", "hooks"), { recursive: true });
      symlinkSync("../githooks", join(ws2, ".git", "hooks"));
      await expect(sh(ws2, "touch ran")).rejects.toThrow(/'\.git\/hooks' is a symbolic link/);
      expect(existsSync(join(ws2, "ran"))).toBe(false);
    });

    it("a .git pointer through a link inside the workspace, or to a missing directory there, is refused", async () => {
      const ws = join(root, `ptr${++n}`);
      mkdirSync(join(ws, "real", "repo"), { recursive: true });
      execFileSync("git", ["init", "-q", "--separate-git-dir", join(ws, "real", "repo"), ws], {
        env: hostEnv,
      });
      // The pointer goes through `link`, which a command could point at a repository of its own.
      symlinkSync("real", join(ws, "link"));
      writeFileSync(join(ws, ".git"), "gitdir: link/repo\n");
      await expect(sh(ws, "touch ran")).rejects.toThrow(
        /gitdir: pointer to 'link\/repo', which leads through a symbolic link/,
      );
      writeFileSync(join(ws, ".git"), "gitdir: not-yet\n");
      await expect(sh(ws, "touch ran")).rejects.toMatchObject({ code: "unsafe_repository" });
      await expect(sh(ws, "touch ran")).rejects.toThrow(/'not-yet', which does not exist/);
      expect(existsSync(join(ws, "ran"))).toBe(false);
      // A pointer to the real directory works (and that repository is protected, see above).
      writeFileSync(join(ws, ".git"), "gitdir: real/repo\n");
      expect((await sh(ws, "git status --short >/dev/null && echo fine")).stdout).toBe("fine\n");
    });

    it("links planted in .git that the user's git would write through are gone after the command", async () => {
      const plant = (victims: string) =>
        [
          `rm -f .git/COMMIT_EDITMSG .git/logs/HEAD`,
          `ln -s ${victims}/editmsg .git/COMMIT_EDITMSG`,
          `ln -s ${victims}/reflog .git/logs/HEAD`,
          `mkdir -p .git/logs/refs/heads && rm -f .git/logs/refs/heads/master .git/logs/refs/heads/main`,
          `ln -s ${victims}/branchlog .git/logs/refs/heads/$(git symbolic-ref --short HEAD)`,
          `ln -s ${victims}/objdir .git/objects/ee`,
          // gc and update-server-info write files under objects/info and objects/pack by name.
          `mkdir -p .git/objects/pack && ln -s ${victims}/packs .git/objects/info/packs`,
          // git fsck --lost-found writes <dir>/<hash> files: a planted link there is written through.
          `mkdir -p .git/lost-found/other && ln -s ${victims}/lostfound .git/lost-found/other/$(echo x | git hash-object -w --stdin)`,
          // A directory no list names.
          `mkdir -p .git/zz-unknown/deep && ln -s ${victims}/unknown .git/zz-unknown/deep/link`,
          // A linked logs/rebase-merge must not make the cleanup wander outside and delete there.
          `ln -s ${victims}/outside-dir .git/rebase-merge`,
        ].join("; ");
      const victimsFor = (label: string) => {
        const dir = join(root, `victims-${label}${++n}`);
        mkdirSync(join(dir, "objdir"), { recursive: true });
        for (const f of ["editmsg", "reflog", "branchlog", "lostfound", "unknown", "packs"])
          writeFileSync(join(dir, f), "the user's file\n");
        // The user's own link in a directory outside, which a linked .git/rebase-merge points at.
        mkdirSync(join(dir, "outside-dir"));
        symlinkSync("/etc/hostname", join(dir, "outside-dir", "users-link"));
        return dir;
      };
      const untouched = (dir: string) =>
        ["editmsg", "reflog", "branchlog", "lostfound", "unknown"].every(
          (f) => readFileSync(join(dir, f), "utf8") === "the user's file\n",
        ) && readdirSync(join(dir, "objdir")).length === 0;
      // A link the user made before the command stays.
      const keep = (ws: string) => symlinkSync("../README.md", join(ws, ".git", "users-own-link"));

      // Control: unsandboxed, the user's next commit writes through the links.
      const control = repo();
      const controlVictims = victimsFor("control");
      await sh(control, plant(controlVictims), OFF);
      userGitAfterwards(control);
      for (let i = 0; i < 16; i++) {
        writeFileSync(join(control, `f${i}`), `${i}\n`);
        hostGit(control, "add", `f${i}`);
      }
      hostGit(control, "commit", "-qm", "more objects");
      spawnSync("git", ["fsck", "--lost-found"], { cwd: control, env: hostEnv, stdio: "ignore" });
      expect(untouched(controlVictims), "the attack itself works").toBe(false);
      expect(readFileSync(join(controlVictims, "lostfound"), "utf8"), "fsck writes through the link").toBe(
        "x\n",
      );

      const ws = repo();
      keep(ws);
      const victims = victimsFor("sandboxed");
      const r = await sh(ws, `${plant(victims)}; ls -l .git/COMMIT_EDITMSG`);
      expect(r.stdout).toContain(`-> ${victims}/editmsg`);
      expect(lstatSync(join(ws, ".git", "users-own-link")).isSymbolicLink()).toBe(true);
      for (const p of [
        "COMMIT_EDITMSG",
        "logs/HEAD",
        "objects/ee",
        "objects/info/packs",
        "zz-unknown/deep/link",
      ]) {
        expect(existsSync(join(ws, ".git", p)) && lstatSync(join(ws, ".git", p)).isSymbolicLink(), p).toBe(
          false,
        );
      }
      userGitAfterwards(ws);
      for (let i = 0; i < 16; i++) {
        writeFileSync(join(ws, `f${i}`), `${i}\n`);
        hostGit(ws, "add", `f${i}`);
      }
      hostGit(ws, "commit", "-qm", "more objects");
      spawnSync("git", ["fsck", "--lost-found"], { cwd: ws, env: hostEnv, stdio: "ignore" });
      expect(
        readdirSync(join(ws, ".git", "lost-found", "other")).every(
          (f) => !lstatSync(join(ws, ".git", "lost-found", "other", f)).isSymbolicLink(),
        ),
      ).toBe(true);
      expect(untouched(victims)).toBe(true);
      expect(existsSync(join(ws, ".git", "rebase-merge"))).toBe(false);
      expect(lstatSync(join(victims, "outside-dir", "users-link")).isSymbolicLink()).toBe(true);
      expect(hostGit(ws, "log", "-1", "--format=%s")).toBe("more objects\n");
    });

    it("modes a command took off the workspace root and .git are put back before the checks after it", async () => {
      // As a non-root user, `chmod 0300 .git` kept the host from listing .git, so a planted
      // link survived and the user's next commit wrote through it (root ignores the bits,
      // so here the modes themselves are the witness).
      const ws = repo();
      const before = [lstatSync(ws).mode & 0o7777, lstatSync(join(ws, ".git")).mode & 0o7777];
      writeFileSync(join(root, "victim-mode"), "the user's file\n");
      const r = await sh(
        ws,
        `ln -sf ${root}/victim-mode .git/COMMIT_EDITMSG && chmod 0300 .git && chmod 0500 .`,
      );
      expect(r.exitCode, r.stderr).toBe(0);
      expect([lstatSync(ws).mode & 0o7777, lstatSync(join(ws, ".git")).mode & 0o7777]).toEqual(before);
      expect(
        lstatSync(join(ws, ".git", "COMMIT_EDITMSG"), { throwIfNoEntry: false })?.isSymbolicLink() ?? false,
      ).toBe(false);
    });

    it("FIFOs and sockets planted anywhere under .git are gone after the command, with a notice", async () => {
      // Round four: `rm .git/index && mkfifo .git/index` made the user's next `git status`
      // block in open() forever (and the git tools until their timeout).
      const socket = `${JSON.stringify(process.execPath)} -e "require('net').createServer().listen('.git/zz/sock', () => process.exit(0))"`;
      const plant = [
        "rm .git/index && mkfifo .git/index",
        "mkfifo .git/packed-refs",
        // A loose-object folder: git opens objects there by name to read them.
        "mkdir -p .git/objects/ab && mkfifo .git/objects/ab/cdef0123456789abcdef0123456789abcdef01",
        "mkdir -p .git/zz/deep && mkfifo .git/zz/deep/pipe",
        socket,
      ].join(" && ");
      const userStatus = (ws: string) =>
        spawnSync("git", ["status", "--short"], { cwd: ws, env: hostEnv, timeout: 3_000, encoding: "utf8" });

      // Control: unsandboxed, the user's git status blocks on the FIFO index.
      const control = repo();
      const off = await sh(control, plant, OFF);
      expect(off.exitCode, off.stderr).toBe(0);
      expect(userStatus(control).error?.message ?? "", "the attack itself works").toMatch(/ETIMEDOUT/);

      const ws = repo();
      // The user's own FIFO, there before the command, stays.
      execFileSync("mkfifo", [join(ws, ".git", "users-own-fifo")]);
      const r = await sh(ws, `${plant}; ls -l .git/index`);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^p/); // inside, the command did make the FIFO
      for (const p of [
        "index",
        "packed-refs",
        "objects/ab/cdef0123456789abcdef0123456789abcdef01",
        "zz/deep/pipe",
        "zz/sock",
      ])
        expect(existsSync(join(ws, ".git", p)), p).toBe(false);
      expect(lstatSync(join(ws, ".git", "users-own-fifo")).isFIFO()).toBe(true);
      expect(r.stderr).toContain(
        "[capgate] The command left 5 pipes, sockets or devices in the repository's metadata",
      );
      expect(r.stderr).toContain("'.git/index'");
      expect(r.stderr).toContain("rebuild it from HEAD with `git reset`");
      expect(r.stderrBytes).toBe(Buffer.byteLength(r.stderr));
      // The user's git answers again (the index is gone: every file shows as deleted and untracked).
      rmSync(join(ws, ".git", "users-own-fifo"));
      const status = userStatus(ws);
      expect(status.error, "git status does not block").toBeUndefined();
      expect(status.status).toBe(0);
      hostGit(ws, "reset", "-q");
      expect(hostGit(ws, "status", "--short")).toBe("");
    });

    it("two sandboxes at once in a workspace without .git: the second sees the placeholder, not a repository", async () => {
      const ws = join(root, `nogit${++n}`);
      mkdirSync(ws);
      // The first command waits until the second has finished, so both overlap without timing.
      const first = sh(
        ws,
        "i=0; while [ ! -e second-done ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo first",
      );
      for (let i = 0; i < 600 && !existsSync(join(ws, ".git")); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(existsSync(join(ws, ".git"))).toBe(true);
      const second = await sh(
        ws,
        `git init -q .; mkdir -p .git/hooks; printf '#!/bin/sh\\ntouch "${marks}/twice-hook"\\n' > .git/hooks/pre-commit; touch second-done`,
      );
      expect(second.stderr).toMatch(/Read-only file system|Permission denied|cannot/i);
      expect((await first).stdout).toBe("first\n");
      expect(existsSync(join(ws, ".git"))).toBe(false);
    });

    describe("a repository the command assembles at the workspace root", () => {
      /** The user's plain git in the workspace afterwards: `git status`. */
      const userStatus = (ws: string) =>
        spawnSync("git", ["status"], {
          cwd: ws,
          env: { ...hostEnv, GIT_CEILING_DIRECTORIES: root },
          stdio: "ignore",
        });
      // A root repository whose work tree is the workspace itself, so git status runs its fsmonitor.
      const rootConfig = (name: string) =>
        `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = touch ${marks}/${name}-fsmonitor\\n' > config`;
      const ROOT_ATTACKS: { name: string; setup(): string; script(name: string): string }[] = [
        {
          name: "bare-init",
          setup: () => {
            const ws = join(root, `rootrepo${++n}`);
            mkdirSync(ws);
            return ws;
          },
          script: (name) => `git init -q --bare . && ${rootConfig(name)}`,
        },
        {
          name: "broken-dotgit-head",
          setup: () => repo(),
          script: (name) =>
            `cp .git/HEAD HEAD && cp -r .git/objects .git/refs . && ${rootConfig(name)} && echo broken > .git/HEAD`,
        },
        {
          // HEAD plus a commondir naming a directory with objects and refs: no single
          // directory holds all three names, and config.worktree makes the root a work tree.
          name: "root-commondir",
          setup: () => repo(),
          script: (name) =>
            [
              "git init -q --bare sub",
              "git -C sub config core.repositoryformatversion 1",
              "git -C sub config extensions.worktreeConfig true",
              `git -C sub config core.fsmonitor 'touch ${marks}/${name}-fsmonitor; echo'`,
              'git -C sub fetch -q "$PWD/.git" HEAD:refs/heads/main',
              `printf '[core]\\n\\tbare = false\\n\\tworktree = %s\\n' "$PWD" > config.worktree`,
              "echo 'ref: refs/heads/main' > HEAD",
              "echo sub > commondir",
              "echo garbage > .git/HEAD",
            ].join(" && "),
        },
        {
          // Every fixed rename target taken in advance.
          name: "names-taken",
          setup: () => {
            const ws = join(root, `rootrepo${++n}`);
            mkdirSync(ws);
            return ws;
          },
          script: (name) =>
            `touch HEAD.capgate-disabled; for i in $(seq 1 99); do touch HEAD.capgate-disabled-$i; done; git init -q --bare . && ${rootConfig(name)}`,
        },
      ];
      it.each(ROOT_ATTACKS.map((a) => [a.name, a] as const))(
        "%s: the user's git status runs the model's fsmonitor without the sandbox, and not with it",
        async (name, attack) => {
          const control = attack.setup();
          const off = await sh(control, attack.script(`${name}-off`), OFF);
          expect(off.exitCode, off.stderr).toBe(0);
          userStatus(control);
          expect(existsSync(mark(`${name}-off-fsmonitor`))).toBe(true);

          const ws = attack.setup();
          const result = await sh(ws, attack.script(name));
          expect(result.exitCode, result.stderr).toBe(0);
          expect(result.stderr).toMatch(/capgate renamed HEAD to HEAD\.capgate-disabled-[0-9a-f]{12}/);
          expect(result.stderrBytes).toBe(Buffer.byteLength(result.stderr));
          expect(existsSync(join(ws, "HEAD"))).toBe(false);
          expect(readdirSync(ws).filter((e) => /^HEAD\.capgate-disabled-[0-9a-f]{12}$/.test(e))).toHaveLength(
            1,
          );
          // Nothing deleted: only HEAD was renamed.
          expect(existsSync(join(ws, "commondir")) || existsSync(join(ws, "objects"))).toBe(true);
          userStatus(ws);
          expect(existsSync(mark(`${name}-fsmonitor`))).toBe(false);
        },
      );
      it("a workspace root that already is a repository directory is refused before anything runs", async () => {
        const ws = join(root, `bareroot${++n}`);
        mkdirSync(ws);
        hostGit(ws, "init", "-q", "--bare", ".");
        await expect(sh(ws, `touch ${marks}/bare-ran`)).rejects.toMatchObject({ code: "unsafe_repository" });
        expect(existsSync(mark("bare-ran"))).toBe(false);
        expect(readFileSync(join(ws, "HEAD"), "utf8")).toMatch(/^ref: refs\/heads\//);
      });
    });
  },
);
