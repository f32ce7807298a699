import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { isInside, isPolicyFile, lstatOrUndefined, releaseMissingPolicyFiles } from "@capgate/workspace";
import { currentOwner, ownerGone, ownerRunning, parseOwner, processExists } from "./process-owner.js";
import { disableRootRepository } from "./sandbox-git.js";

/**
 * A record, in the state directory (which no command can read or write), of each sandbox
 * this process has running: enough for a later capgate process to do its after-command
 * steps when this one could not — killed by SIGKILL or the OOM killer, which no exit hook
 * survives. Written before the command starts, removed when it is released.
 */
interface JournalEntry {
  pid: number;
  /** The pid namespace the pid is in (`/proc/self/ns/pid`): another namespace cannot tell whether it lives. Kept for capgate versions that read only this. */
  pidns?: string;
  /** The capgate process (machine, boot, pid namespace, start time): `ownerGone` tells for certain when it has ended. Absent in entries of older versions. */
  owner?: unknown;
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
  const record: JournalEntry = {
    pid: process.pid,
    ...(PID_NS ? { pidns: PID_NS } : {}),
    owner: currentOwner(),
    ...entry,
  };
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
 * Whether the entry's capgate process may still run: unless it is gone for certain
 * (`ownerGone`, the check browser profiles use too: same machine, and another boot or the
 * same pid namespace with the pid gone or reused), it counts as running, so its sandbox is
 * neither recovered nor forgotten from here (fail closed) — a process on another machine
 * sharing the state directory, or in another pid namespace (a container), cannot be seen.
 * An entry of an older capgate (no owner record): its pid namespace and pid, as it was.
 */
function alive(entry: JournalEntry): boolean {
  const owner = entry.owner === undefined ? undefined : parseOwner(entry.owner);
  if (owner) return owner.pid !== entry.pid || !ownerGone(owner);
  if (entry.owner !== undefined) return true; // a damaged owner record: not provably gone
  if (entry.pidns !== undefined && entry.pidns !== PID_NS) return true;
  return entry.pid === process.pid || processExists(entry.pid);
}

/** A readable journal entry, its file, and when that file was written (its ctime, ms). */
interface Recorded {
  file: string;
  entry: JournalEntry;
  written: number;
}

/**
 * How much older than a record a file may look and still count as its command's work: the
 * record's time is the state directory's clock and precision, the file's its own file
 * system's (1 s on ext4 with small inodes and HFS+, 2 s on FAT; a file server's clock may
 * lag). Tests lower it; nothing else changes it.
 */
export const journalClock = { slackMs: 10_000 };

/**
 * Whether `path` exists and changed no earlier than `written` (less `journalClock.slackMs`): its
 * ctime, which no process can set back. A record is written before its command starts, so
 * whatever the command made is at least as new; a file older than the record was not made by
 * it, whatever the record says.
 */
function changedSince(path: string, written: number): boolean {
  const st = lstatOrUndefined(path);
  return st !== undefined && st.ctimeMs >= written - journalClock.slackMs;
}

/** The journal's readable entries, each with its file. */
function readJournal(stateDir: string): Recorded[] {
  const dir = journalDir(stateDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const out: Recorded[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const st = lstatSync(file);
      if (!st.isFile()) continue;
      const entry = JSON.parse(readFileSync(file, "utf8")) as JournalEntry;
      if (typeof entry.pid === "number" && typeof entry.workspace === "string")
        out.push({ file, entry, written: st.ctimeMs });
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
  for (const { file, entry, written } of readJournal(stateDir)) {
    if (alive(entry)) continue;
    // Only what the command could have made: a HEAD, a policy file no older than the record.
    const root = changedSince(join(entry.workspace, "HEAD"), written)
      ? disableRootRepository(entry.workspace)
      : undefined;
    if (root) notices.push(`After an interrupted command in ${entry.workspace}: ${root}`);
    const files = policyFilesOf(entry).filter((p) => lstatOrUndefined(p) !== undefined);
    const policy = releaseMissingPolicyFiles(files.filter((p) => changedSince(p, written)));
    for (const p of files.filter((q) => !changedSince(q, written)))
      notices.push(
        `After an interrupted command in ${entry.workspace}: ${p} is older than the command's record, so capgate did not take it for the command's work and left it; check it is your policy.`,
      );
    if (policy) notices.push(`After an interrupted command in ${entry.workspace}: ${policy}`);
    rmSync(file, { force: true });
  }
  return notices;
}

/**
 * The entry's policy files that recovery may rename: only files named as capgate's policy
 * file, inside the entry's own workspace (and, where they are used, no older than the
 * record: `changedSince`). The journal lies where no command can write, but a record that
 * named anything else would rename a file of its choosing: never acted on.
 */
function policyFilesOf(entry: JournalEntry): string[] {
  if (!Array.isArray(entry.missingPolicyFiles)) return [];
  const workspace = resolve(entry.workspace);
  return entry.missingPolicyFiles.filter(
    (p): p is string =>
      typeof p === "string" && isAbsolute(p) && resolve(p) === p && isPolicyFile(p) && isInside(workspace, p),
  );
}

/**
 * The policy files that were missing when a sandbox that is still running started (its
 * capgate process is alive, this one included), with that process's id. One of them that
 * exists now was made while the sandboxed command or server runs, maybe by it: it is not
 * policy until the sandbox's after-command step has renamed it aside or the sandbox ends.
 */
export function policyFilesOfRunningSandboxes(stateDir: string): Array<{ path: string; pid: number }> {
  const out: Array<{ path: string; pid: number }> = [];
  for (const { entry, written } of readJournal(stateDir)) {
    if (!alive(entry)) continue;
    // A record of a process running here for certain lists what it lists (fail closed). One
    // whose owner cannot be seen (another machine or namespace; a record planted with such
    // an owner) cannot set aside a policy file older than itself: the user's.
    const owner = entry.owner === undefined ? undefined : parseOwner(entry.owner);
    const running = owner !== undefined && owner.pid === entry.pid && ownerRunning(owner);
    for (const path of policyFilesOf(entry))
      if (running || !lstatOrUndefined(path) || changedSince(path, written))
        out.push({ path, pid: entry.pid });
  }
  return out;
}
