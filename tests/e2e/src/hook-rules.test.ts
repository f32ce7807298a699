import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "@capgate/test-postgres";
import { needs } from "@capgate/test-system-parts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN } from "./support.js";

/**
 * Issue 17, part 4, the review's psql form replayed for real: `psql -c '\! git push …'`
 * runs the push from psql's meta-command (it needs a server to connect to first), and the
 * Claude Code hook, with `deny: git push`, must not let it through: psql is a program
 * capgate cannot read completely, so the hook asks.
 */
const parts = needs(["postgres", "git"]);
const PSQL = "/usr/bin/psql";

describe.skipIf(parts.skip || !existsSync(PSQL))(`hook: psql \\! under a deny rule${parts.note}`, () => {
  let cluster: TestCluster;
  let dir: string;
  beforeAll(async () => {
    cluster = await startTestCluster();
    dir = mkdtempSync(join(tmpdir(), "capgate-e2e-psql-"));
  });
  afterAll(async () => {
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const git = (args: string[], cwd: string) =>
    spawnSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });

  it("really pushes without the hook, and the hook asks before it runs", async () => {
    // A repository whose origin is a bare repository beside it, with nothing pushed yet.
    expect(git(["init", "-q", "-b", "main", "--bare", "remote.git"], dir).status).toBe(0);
    const work = join(dir, "work");
    expect(git(["init", "-q", "-b", "main", work], dir).status).toBe(0);
    git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"], work);
    git(["remote", "add", "origin", join(dir, "remote.git")], work);
    const command = `psql ${cluster.url} -c '\\! git push -q origin main'`;
    const replay = spawnSync("bash", ["--noprofile", "--norc", "-c", command], {
      cwd: work,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(replay.status, replay.stderr).toBe(0);
    const pushed = git(["--git-dir", join(dir, "remote.git"), "rev-parse", "--verify", "-q", "main"], dir);
    expect(pushed.status, "the psql form must really push (or this test proves nothing)").toBe(0);

    writeFileSync(
      join(work, "capgate.config.json"),
      JSON.stringify({
        shell: { deny: [{ prefix: ["git", "push"] }, { prefix: ["rm", "-rf"] }, { prefix: ["curl"] }] },
      }),
    );
    const payload = JSON.stringify({
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command },
      cwd: work,
    });
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI_BIN, "hook", "claude-code"], { cwd: work });
      let stdout = "";
      child.stdout.on("data", (d) => {
        stdout += d;
      });
      child.on("error", reject);
      child.on("close", () => resolve(stdout));
      child.stdin.end(payload);
    });
    const decision = JSON.parse(out).hookSpecificOutput;
    expect(decision.permissionDecision).toBe("ask");
    expect(decision.permissionDecisionReason).toMatch(/psql runs `\\!` meta-commands/);
  });
});
