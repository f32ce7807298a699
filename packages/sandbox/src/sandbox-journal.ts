import {
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
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
  /** The pid namespace the pid is in (`/proc/self/ns/pid`): another namespace cannot tell whether it lives. */
  pidns?: string;
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
  const record: JournalEntry = { pid: process.pid, ...(PID_NS ? { pidns: PID_NS } : {}), ...entry };
  writeFileSync(temp, JSON.stringify(record), { mode: 0o600 });
  renameSync(temp, file);
  return () => rmSync(file, { force: true });
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return undefined;
  }
}

const PID_NS = pidNamespace();

/**
 * Whether the entry's capgate process still runs. A process in another pid namespace (a
 * container sharing the workspace and state directory) cannot be seen from here: it counts
 * as running, so its sandbox is neither recovered nor forgotten from here (fail closed).
 */
function alive(entry: JournalEntry): boolean {
  if (entry.pidns !== undefined && entry.pidns !== PID_NS) return true;
  if (entry.pid === process.pid) return true;
  try {
    process.kill(entry.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The journal's readable entries, each with its file. */
function readJournal(stateDir: string): Array<{ file: string; entry: JournalEntry }> {
  const dir = journalDir(stateDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const out: Array<{ file: string; entry: JournalEntry }> = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const entry = JSON.parse(readFileSync(file, "utf8")) as JournalEntry;
      if (typeof entry.pid === "number" && typeof entry.workspace === "string") out.push({ file, entry });
    } catch {
      // a record being written (its rename is atomic) or damaged: nothing to act on
    }
  }
  return out;
}

/**
 * Do the after-command steps of every sandbox recorded in `stateDir` whose capgate process
 * is gone: a repository assembled at the workspace root is disabled, and a policy file the
 * command created is renamed aside — before anything reads that policy. Called when a
 * sandbox starts and by the harness's config loader before it reads a config file.
 * @returns the notices of what was undone (usually none).
 */
export function recoverInterruptedSandboxes(stateDir: string): string[] {
  const notices: string[] = [];
  for (const { file, entry } of readJournal(stateDir)) {
    if (alive(entry)) continue;
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

/**
 * The policy files that were missing when a sandbox that is still running started (its
 * capgate process is alive, this one included), with that process's id. One of them that
 * exists now was made while the sandboxed command or server runs, maybe by it: it is not
 * policy until the sandbox's after-command step has renamed it aside or the sandbox ends.
 */
export function policyFilesOfRunningSandboxes(stateDir: string): Array<{ path: string; pid: number }> {
  const out: Array<{ path: string; pid: number }> = [];
  for (const { entry } of readJournal(stateDir)) {
    if (!alive(entry) || !Array.isArray(entry.missingPolicyFiles)) continue;
    for (const path of entry.missingPolicyFiles)
      if (typeof path === "string") out.push({ path, pid: entry.pid });
  }
  return out;
}
