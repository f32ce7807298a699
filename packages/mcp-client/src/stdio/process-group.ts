/** True while any process of the group led by `pgid` exists (zombies included). */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * SIGTERM the whole process group, then SIGKILL whatever is left after `graceMs`. Killing
 * the group, not the pid, is what reaps `npx` / `sh -c` wrappers' children too.
 */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (process.platform === "win32") return;
  if (!groupExists(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(20);
    if (!groupExists(pgid)) return;
  }
  signalGroup(pgid, "SIGKILL");
}

// Groups still alive when the host process exits get SIGKILL synchronously from one
// 'exit' listener, so a host that forgets close() (or calls process.exit) leaves no orphans.
const liveGroups = new Set<number>();
let exitHookInstalled = false;

export function trackGroup(pgid: number): void {
  if (process.platform === "win32") return;
  liveGroups.add(pgid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const group of liveGroups) signalGroup(group, "SIGKILL");
    });
  }
}

export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}
