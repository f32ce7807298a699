import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxedRunner, trustedRepoGit } from "./runners.js";

const sandboxPart = needs(["git", "bwrap"]);
const gitPart = needs(["git"]);

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function dirs() {
  const base = mkdtempSync(join(tmpdir(), "capgate-runners-"));
  roots.push(base);
  const checkout = join(base, "checkout");
  const stateDir = join(base, "state");
  const loot = join(base, "loot");
  for (const d of [checkout, stateDir, loot]) mkdirSync(d);
  writeFileSync(join(stateDir, "secret"), "state-dir-secret\n");
  return { base, checkout, stateDir, loot };
}

const env = { PATH: process.env.PATH, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" };

describe.skipIf(sandboxPart.skip)(`sandboxedRunner${sandboxPart.note}`, () => {
  // What holds even if git were made to run a program: the program runs in the sandbox.
  it("a program started through it reads no secret, writes only the checkout and has no network", async () => {
    const d = dirs();
    const run = sandboxedRunner({ workspace: d.checkout, stateDir: d.stateDir });
    const script = [
      `cat '${join(d.stateDir, "secret")}' > '${join(d.checkout, "read")}' 2>&1`,
      `echo x > '${join(d.loot, "marker")}' 2>/dev/null && echo wrote-outside`,
      `echo x > '${join(d.checkout, "inside")}' && echo wrote-inside`,
      "(exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && echo network || echo no-network",
    ].join("\n");
    const r = await run({ file: "bash", args: ["-c", script], cwd: d.checkout, env, timeoutMs: 60_000 });
    expect(r.stdout.split("\n").filter(Boolean)).toEqual(["wrote-inside", "no-network"]);
    expect(readFileSync(join(d.checkout, "read"), "utf8")).not.toContain("state-dir-secret");
    expect(existsSync(join(d.loot, "marker"))).toBe(false);
  });

  it("runs git: a program git runs (an alias, deliberately allowed here) is contained", async () => {
    const d = dirs();
    execFileSync("git", ["init", "-q", d.checkout], { env });
    const run = sandboxedRunner({ workspace: d.checkout, stateDir: d.stateDir });
    const marker = join(d.loot, "marker");
    const r = await run({
      file: "git",
      args: ["-c", `alias.x=!cat '${join(d.stateDir, "secret")}' > '${marker}'`, "x"],
      cwd: d.checkout,
      env,
      timeoutMs: 60_000,
    });
    expect(r.exitCode).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});

describe.skipIf(gitPart.skip)(`trustedRepoGit${gitPart.note}`, () => {
  it("runs no hook or fsmonitor of the repository, and allows no transport unless a call says so", async () => {
    const d = dirs();
    execFileSync("git", ["init", "-q", d.checkout], { env });
    const marker = join(d.loot, "marker");
    execFileSync("git", ["config", "core.fsmonitor", `touch '${marker}'`], { cwd: d.checkout, env });
    mkdirSync(join(d.checkout, ".git", "hooks"), { recursive: true });
    writeFileSync(
      join(d.checkout, ".git", "hooks", "reference-transaction"),
      `#!/bin/sh\ntouch '${marker}'\n`,
      {
        mode: 0o755,
      },
    );
    writeFileSync(join(d.checkout, "f"), "f\n");
    const git = trustedRepoGit({
      cwd: d.checkout,
      env: {
        ...env,
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@t",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@t",
      },
      timeoutMs: 30_000,
    });
    await git.ok(["add", "f"]);
    await git.ok(["status"]);
    await git.ok(["commit", "-q", "-m", "f"]);
    expect(existsSync(marker)).toBe(false);
    const clone = join(d.base, "clone");
    const refused = await git.run(["clone", "-q", d.checkout, clone]);
    expect(refused.stderr).toMatch(/transport 'file' not allowed/);
    await git.ok(["clone", "-q", d.checkout, clone], { settings: ["protocol.file.allow=always"] });
    expect(existsSync(join(clone, "f"))).toBe(true);
  });
});
