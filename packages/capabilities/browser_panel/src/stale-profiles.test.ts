import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sweepStaleProfiles } from "./session.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function profile(root: string, name: string, owner?: number): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "Default"), { recursive: true });
  writeFileSync(join(dir, "Default", "Preferences"), "{}");
  if (owner !== undefined) writeFileSync(join(dir, "capgate-owner"), `${owner}\n`);
  return dir;
}

describe("profiles left behind by a killed process", () => {
  it("are removed when their owner is gone; live, foreign, unmarked and linked ones are not", async () => {
    const root = mkdtempSync(join(tmpdir(), "capgate-sweep-"));
    roots.push(root);
    // A pid that existed and has exited.
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    expect(gone).toBeGreaterThan(0);
    const stale = profile(root, "capgate-browser-stale", gone);
    const live = profile(root, "capgate-browser-live", process.ppid);
    const unmarked = profile(root, "capgate-browser-unmarked");
    const other = profile(root, "someone-else", gone);
    const garbage = profile(root, "capgate-browser-garbage");
    writeFileSync(join(garbage, "capgate-owner"), "not a pid");
    // A link named like a profile, to a directory that looks stale: never followed.
    const target = profile(root, "target", gone);
    symlinkSync(target, join(root, "capgate-browser-link"));

    expect(await sweepStaleProfiles(root)).toEqual([stale]);
    expect(existsSync(stale)).toBe(false);
    for (const kept of [live, unmarked, other, garbage, target, join(root, "capgate-browser-link")])
      expect([kept, existsSync(kept)]).toEqual([kept, true]);
    expect(existsSync(join(target, "Default", "Preferences"))).toBe(true);
  });

  it("keeps a profile whose owner file names this process", async () => {
    const root = mkdtempSync(join(tmpdir(), "capgate-sweep-"));
    roots.push(root);
    const mine = profile(root, "capgate-browser-mine", process.pid);
    expect(await sweepStaleProfiles(root)).toEqual([]);
    expect(existsSync(mine)).toBe(true);
  });

  it("is quiet about a root it cannot read", async () => {
    expect(await sweepStaleProfiles(join(tmpdir(), "capgate-no-such-dir-", String(process.pid)))).toEqual([]);
  });
});
