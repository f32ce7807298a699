import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { releaseMissingPolicyFiles } from "@capgate/workspace";
import { disableRootRepository } from "./sandbox-git.js";

/**
 * A record, in the state directory (which no command can read or write), of each sandbox
 * this process has running: enough for a later capgate process to do its after-command
 * steps when this one could not — killed by SIGKILL or the OOM killer, which no exit hook
 * survives. Written before the command starts, removed when it is released.
 */
interface JournalEntry {
  pid: number;
  workspace: string;
  /** Policy files that did not exist when the command started. */
  missingPolicyFiles: string[];
}

function journalDir(stateDir: string): string {
  return join(stateDir, "sandboxes");
}

/**
 * Record a sandbox about to start; returns its removal.
 * @throws when the record cannot be written (the command must then not run: a crash
 * would leave nobody to clean up after it).
 */
export function journalSandbox(stateDir: string, mark: string, entry: Omit<JournalEntry, "pid">): () => void {
  const dir = journalDir(stateDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${mark}.json`);
  const temp = `${file}.tmp`;
  writeFileSync(temp, JSON.stringify({ pid: process.pid, ...entry } satisfies JournalEntry), { mode: 0o600 });
  renameSync(temp, file);
  return () => rmSync(file, { force: true });
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Do the after-command steps of every sandbox recorded in `stateDir` whose capgate process
 * is gone: a repository assembled at the workspace root is disabled, and a policy file the
 * command created is renamed aside — before anything reads that policy. Called when a
 * sandbox starts and by the CLI before it loads its config.
 * @returns the notices of what was undone (usually none).
 */
export function recoverInterruptedSandboxes(stateDir: string): string[] {
  const dir = journalDir(stateDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const notices: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let entry: JournalEntry;
    try {
      entry = JSON.parse(readFileSync(file, "utf8")) as JournalEntry;
    } catch {
      continue;
    }
    if (typeof entry.pid !== "number" || typeof entry.workspace !== "string" || alive(entry.pid)) continue;
    const root = disableRootRepository(entry.workspace);
    if (root) notices.push(`After an interrupted command in ${entry.workspace}: ${root}`);
    const policy = releaseMissingPolicyFiles(
      Array.isArray(entry.missingPolicyFiles) ? entry.missingPolicyFiles : [],
    );
    if (policy) notices.push(`After an interrupted command in ${entry.workspace}: ${policy}`);
    rmSync(file, { force: true });
  }
  return notices;
}
