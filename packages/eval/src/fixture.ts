import { execFile } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { CapgateError } from "@capgate/schema";
import type { Task } from "./types.js";

const run = promisify(execFile);

// Fixed identity and dates: the same task builds the same commits (same hashes) every time.
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "capgate eval",
  GIT_AUTHOR_EMAIL: "eval@capgate.invalid",
  GIT_COMMITTER_NAME: "capgate eval",
  GIT_COMMITTER_EMAIL: "eval@capgate.invalid",
};

/**
 * Lay out a task's workspace in `workspace` (created, must not exist yet): the fixture
 * directory, the inline files, and with `git` a real repository with the given history.
 */
export async function materialiseWorkspace(task: Task, workspace: string): Promise<void> {
  mkdirSync(workspace, { recursive: true });
  const spec = task.workspace ?? {};
  if (spec.dir) cpSync(resolve(task.dir, spec.dir), workspace, { recursive: true });
  writeFiles(workspace, spec.files ?? {});
  if (!spec.git) return;
  const git = spec.git;
  let n = 0;
  const gitRun = async (args: string[]) => {
    const date = `2025-01-01T00:${String(n).padStart(2, "0")}:00Z`;
    try {
      await run("git", args, {
        cwd: workspace,
        env: { ...process.env, ...GIT_ENV, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new CapgateError(
        "fixture_failed",
        `task ${task.id}: git ${args.join(" ")} failed: ${(e.stderr || e.message).trim()}`,
      );
    }
  };
  await gitRun(["init", "-q", "-b", git.branch ?? "main"]);
  // The repository's own identity, so the model's git.commit works without a global config.
  await gitRun(["config", "user.name", "capgate eval"]);
  await gitRun(["config", "user.email", "eval@capgate.invalid"]);
  await gitRun(["add", "-A"]);
  await gitRun(["commit", "-q", "--allow-empty", "-m", "initial"]);
  for (const commit of git.commits ?? []) {
    n++;
    writeFiles(workspace, commit.files ?? {});
    for (const gone of commit.delete ?? []) rmSync(inside(workspace, gone), { recursive: true, force: true });
    await gitRun(["add", "-A"]);
    await gitRun(["commit", "-q", "--allow-empty", "-m", commit.message]);
  }
  writeFiles(workspace, git.uncommitted ?? {});
}

function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = inside(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** A fixture path must stay inside the workspace. */
function inside(root: string, path: string): string {
  const full = resolve(root, path);
  const rel = relative(root, full);
  if (isAbsolute(path) || rel === "" || rel.startsWith("..") || isAbsolute(rel))
    throw new CapgateError("invalid_suite", `fixture path "${path}" is not inside the workspace`);
  return full;
}
