import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  currentOwner,
  newProfile,
  ownerGone,
  type ProfileOwner,
  removeProfile,
  sweepStaleProfiles,
} from "./profiles.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "capgate-sweep-"));
  roots.push(root);
  return root;
}

function profile(root: string, name: string, owner?: ProfileOwner | string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "Default"), { recursive: true });
  writeFileSync(join(dir, "Default", "Preferences"), "{}");
  if (owner !== undefined)
    writeFileSync(join(dir, "capgate-owner"), typeof owner === "string" ? owner : JSON.stringify(owner));
  return dir;
}

/** A pid that existed and has exited. */
function gonePid(): number {
  const pid = spawnSync(process.execPath, ["-e", "0"]).pid;
  expect(pid).toBeGreaterThan(0);
  return pid;
}

describe("browser profiles left behind by a killed process", () => {
  it("are removed when their owner is gone for certain; nothing else is", async () => {
    const root = tempRoot();
    const self = currentOwner();
    const here = { pidNamespace: self.pidNamespace, boot: self.boot };
    const gone = gonePid();
    const removed = [
      profile(root, "capgate-browser-stale", { pid: gone, ...here }),
      // The pid lives on, but as a process started at another time: reused.
      profile(root, "capgate-browser-reused", { pid: process.ppid, ...here, start: "1" }),
      // Made before the last boot: every process of that boot is gone.
      profile(root, "capgate-browser-lastboot", {
        pid: process.ppid,
        pidNamespace: self.pidNamespace,
        boot: "x",
      }),
    ];
    const kept = [
      profile(root, "capgate-browser-live", { pid: process.ppid, ...here }),
      // A pid of another pid namespace (a container sharing the directory) says nothing here.
      profile(root, "capgate-browser-container", { pid: gone, pidNamespace: "pid:[1]", boot: self.boot }),
      profile(root, "capgate-browser-unmarked"),
      profile(root, "capgate-browser-garbage", "not an owner"),
      profile(root, "capgate-browser-zero", { pid: 0, ...here }),
      profile(root, "capgate-browser-big", JSON.stringify({ pid: gone, ...here, pad: "x".repeat(600) })),
      profile(root, "someone-else", { pid: gone, ...here }),
      profile(root, "target", { pid: gone, ...here }),
    ];
    // A link named like a profile, to a directory that looks stale: never followed.
    symlinkSync(join(root, "target"), join(root, "capgate-browser-link"));
    kept.push(join(root, "capgate-browser-link"));
    // An owner file that is a link to a stale owner, or a FIFO (which would block a plain read).
    const linked = profile(root, "capgate-browser-linked-owner");
    writeFileSync(join(root, "stale-owner"), JSON.stringify({ pid: gone, ...here }));
    symlinkSync(join(root, "stale-owner"), join(linked, "capgate-owner"));
    const fifo = profile(root, "capgate-browser-fifo");
    expect(spawnSync("mkfifo", [join(fifo, "capgate-owner")]).status).toBe(0);
    kept.push(linked, fifo);

    expect((await sweepStaleProfiles(root)).sort()).toEqual([...removed].sort());
    for (const dir of removed) expect([dir, existsSync(dir)]).toEqual([dir, false]);
    for (const dir of kept) expect([dir, existsSync(dir)]).toEqual([dir, true]);
    expect(existsSync(join(root, "target", "Default", "Preferences"))).toBe(true);
  });

  it("never takes this process, or one it cannot check, for gone", () => {
    const self = currentOwner();
    expect(self.pid).toBe(process.pid);
    expect(ownerGone(self, self)).toBe(false);
    expect(ownerGone({ pid: process.pid }, self)).toBe(false);
    expect(ownerGone({ pid: process.ppid, pidNamespace: self.pidNamespace, boot: self.boot }, self)).toBe(
      false,
    );
  });

  it("is quiet about a root it cannot read", async () => {
    expect(await sweepStaleProfiles(join(tmpdir(), `capgate-no-such-dir-${process.pid}`))).toEqual([]);
  });

  it("makes each profile in <stateDir>/browser, private, with its owner; and removes it", async () => {
    const stateDir = tempRoot();
    const made = await newProfile(stateDir, { webrtc: { ip_handling_policy: "disable_non_proxied_udp" } });
    expect(made.startsWith(join(stateDir, "browser", "capgate-browser-"))).toBe(true);
    expect(statSync(join(stateDir, "browser")).mode & 0o777).toBe(0o700);
    expect(statSync(made).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(join(made, "capgate-owner"), "utf8"))).toEqual(currentOwner());
    expect(JSON.parse(readFileSync(join(made, "Default", "Preferences"), "utf8"))).toEqual({
      webrtc: { ip_handling_policy: "disable_non_proxied_udp" },
    });
    // A stale profile already there goes when this process makes its first profile in that root.
    const other = tempRoot();
    const stale = profile(join(other, "browser"), "capgate-browser-old", {
      ...currentOwner(),
      pid: gonePid(),
    });
    const second = await newProfile(other, {});
    expect(existsSync(stale)).toBe(false);
    await removeProfile(made);
    await removeProfile(second);
    expect(existsSync(made)).toBe(false);
  });
});
