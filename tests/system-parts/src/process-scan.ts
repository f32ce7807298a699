import { randomInt } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

export interface MarkedProcess {
  pid: number;
  argv: string[];
}

/**
 * A `sleep` duration no other process on the machine has: `300.<9 random digits>` (sleep
 * takes fractions). Start a process with it as an argument, then look for it by that
 * argument with `processesWith`: the host's process table names it whatever pid namespace
 * or session it ended up in, and however it was started (setsid, a double fork).
 */
export function uniqueSleep(seconds = 300): string {
  return `${seconds}.${String(randomInt(1, 1_000_000_000)).padStart(9, "0")}`;
}

/**
 * Every live (non-zombie) process of the machine with an argument equal to `marker`, read
 * from the host's /proc. Empty where /proc is not readable.
 */
export function processesWith(marker: string): MarkedProcess[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: MarkedProcess[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
      if (state === "Z" || state === "X") continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").slice(0, -1);
      if (argv.includes(marker)) out.push({ pid: Number(name), argv });
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/**
 * A bash line that leaves three processes behind, each with `marker` (from `uniqueSleep`)
 * as its argument: a plain background job, one in a new session (setsid), and one
 * double-forked into a new session (its parent exits at once, so it is re-parented away
 * from the command). The forms a process-group kill misses, beside the one it catches.
 * The line ends once all three run (it waits for them in its own process table, not for a
 * time), so a caller that saw it end knows they were started.
 */
export function leaveBehind(marker: string): string {
  return `sleep ${marker} & setsid sleep ${marker} & setsid bash -c 'sleep ${marker} & exit 0' & until [ "$(pgrep -c -x -f 'sleep ${marker}')" -ge 3 ]; do sleep 0.01; done`;
}
