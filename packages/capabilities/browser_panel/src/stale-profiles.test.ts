import { spawnSync } from "node:child_process";
import {
  chmodSync,
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
import { currentOwner, ownerGone, type ProcessOwner } from "@capgate/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { newProfile, profileRoot, removeProfile, sweepStaleProfiles } from "./profiles.js";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "capgate-sweep-"));
  roots.push(root);
  return root;
}

function profile(root: string, name: string, owner?: ProcessOwner | string): string {
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
    const { machine, boot, pidNamespace } = self;
    const here = { machine, boot, pidNamespace };
    const gone = gonePid();
    const removed = [
      profile(root, "p-stale", { pid: gone, ...here }),
      // The pid lives on, but as a process started at another time: reused.
      profile(root, "p-reused", { pid: process.ppid, ...here, start: "1" }),
      // Made on this machine before its last boot: every process of that boot is gone.
      profile(root, "p-lastboot", { pid: process.ppid, ...here, boot: "another-boot" }),
    ];
    const kept = [
      profile(root, "p-live", { pid: process.ppid, ...here }),
      // A pid of another pid namespace (a container sharing the directory) says nothing here.
      profile(root, "p-container", { pid: gone, ...here, pidNamespace: "pid:[1]" }),
      // Another machine sharing the directory (NFS, a volume), in any boot.
      profile(root, "p-elsewhere", { pid: gone, ...here, machine: "another-machine", boot: "another-boot" }),
      profile(root, "p-nomachine", { pid: gone, boot, pidNamespace }),
      profile(root, "p-unmarked"),
      profile(root, "p-garbage", "not an owner"),
      profile(root, "p-zero", { pid: 0, ...here }),
      profile(root, "p-big", JSON.stringify({ pid: gone, ...here, pad: "x".repeat(600) })),
      profile(root, "someone-else", { pid: gone, ...here }),
      profile(root, "target", { pid: gone, ...here }),
    ];
    // A link named like a profile, to a directory that looks stale: never followed.
    symlinkSync(join(root, "target"), join(root, "p-link"));
    kept.push(join(root, "p-link"));
    // An owner file that is a link to a stale owner, or a FIFO (which would block a plain read).
    const linked = profile(root, "p-linked-owner");
    writeFileSync(join(root, "stale-owner"), JSON.stringify({ pid: gone, ...here }));
    symlinkSync(join(root, "stale-owner"), join(linked, "capgate-owner"));
    const fifo = profile(root, "p-fifo");
    expect(spawnSync("mkfifo", [join(fifo, "capgate-owner")]).status).toBe(0);
    kept.push(linked, fifo);

    expect((await sweepStaleProfiles(root)).sort()).toEqual([...removed].sort());
    for (const dir of removed) expect([dir, existsSync(dir)]).toEqual([dir, false]);
    for (const dir of kept) expect([dir, existsSync(dir)]).toEqual([dir, true]);
    expect(existsSync(join(root, "target", "Default", "Preferences"))).toBe(true);
  });

  it("never takes this process, or one it cannot place, for gone", () => {
    const self = currentOwner();
    expect(self.pid).toBe(process.pid);
    expect(self.machine).toBeTruthy();
    expect(ownerGone(self, self)).toBe(false);
    const gone = gonePid();
    // On Linux a pid is compared only within a known pid namespace.
    expect(ownerGone({ pid: gone, machine: self.machine, boot: self.boot }, self, "linux")).toBe(false);
    expect(
      ownerGone(
        { pid: gone, machine: self.machine, boot: self.boot },
        { ...self, pidNamespace: undefined },
        "linux",
      ),
    ).toBe(false);
    // Where there are no pid namespaces (macOS), the pid alone, on the same machine.
    expect(ownerGone({ pid: gone, machine: "m" }, { pid: process.pid, machine: "m" }, "darwin")).toBe(true);
    expect(ownerGone({ pid: process.ppid, machine: "m" }, { pid: process.pid, machine: "m" }, "darwin")).toBe(
      false,
    );
  });

  it("is quiet about a root it cannot read", async () => {
    expect(await sweepStaleProfiles(join(tmpdir(), `capgate-no-such-dir-${process.pid}`))).toEqual([]);
  });
});

describe("where profiles are made", () => {
  it("in <stateDir>/browser when that is private and outside the workspace; each private, with its owner", async () => {
    const stateDir = tempRoot();
    const workspace = tempRoot();
    const root = await profileRoot(stateDir, workspace);
    expect(root).toBe(join(stateDir, "browser"));
    expect(statSync(root).mode & 0o777).toBe(0o700);
    const made = await newProfile(root, { webrtc: { ip_handling_policy: "disable_non_proxied_udp" } });
    expect(made.startsWith(join(root, "p-"))).toBe(true);
    expect(statSync(made).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(join(made, "capgate-owner"), "utf8"))).toEqual(currentOwner());
    expect(JSON.parse(readFileSync(join(made, "Default", "Preferences"), "utf8"))).toEqual({
      webrtc: { ip_handling_policy: "disable_non_proxied_udp" },
    });
    await removeProfile(made);
    expect(existsSync(made)).toBe(false);
  });

  it("sweeps a root when this process makes its first profile there", async () => {
    const root = join(tempRoot(), "browser");
    mkdirSync(root, { mode: 0o700 });
    const stale = profile(root, "p-old", { ...currentOwner(), pid: gonePid() });
    const made = await newProfile(root, {});
    expect(existsSync(stale)).toBe(false);
    await removeProfile(made);
  });

  it("not where the model could reach it, nor in a directory others may change: then in a private temp directory", async () => {
    const workspace = tempRoot();
    const fallback = join(tmpdir(), `capgate-browser-${process.getuid?.() ?? "user"}`);
    // The state directory is the workspace (or lies in it): refused.
    expect(await profileRoot(workspace, workspace)).toBe(fallback);
    // Its browser directory is a link (here, into the workspace): not followed, refused.
    const linked = tempRoot();
    symlinkSync(workspace, join(linked, "browser"));
    expect(await profileRoot(linked, tempRoot())).toBe(fallback);
    // Others may write it.
    const open = tempRoot();
    mkdirSync(join(open, "browser"), { mode: 0o700 });
    chmodSync(join(open, "browser"), 0o770);
    expect(await profileRoot(open, tempRoot())).toBe(fallback);
    // Others may write its parent, or any directory above (so rename it and put another in its place).
    const shared = tempRoot();
    chmodSync(shared, 0o777);
    expect(await profileRoot(shared, tempRoot())).toBe(fallback);
    const above = tempRoot();
    mkdirSync(join(above, "state"), { mode: 0o700 });
    chmodSync(above, 0o777);
    expect(await profileRoot(join(above, "state"), tempRoot())).toBe(fallback);
    // In the workspace by another name (a link to it): the same directory, refused.
    const alias = join(tempRoot(), "alias");
    symlinkSync(workspace, alias);
    expect(await profileRoot(join(alias, ".capgate"), workspace)).toBe(fallback);
    // Too deep for the proxy's socket path.
    const deep = join(tempRoot(), "x".repeat(90));
    mkdirSync(deep, { recursive: true });
    expect(await profileRoot(deep, tempRoot())).toBe(fallback);
    expect(statSync(fallback).mode & 0o777).toBe(0o700);
  });

  it("a fresh private temp directory when another user took the shared one's name", async () => {
    const tmp = tempRoot();
    const before = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      // Squatted: not a directory of ours.
      writeFileSync(join(tmp, `capgate-browser-${process.getuid?.() ?? "user"}`), "");
      // The state directory is the workspace: refused first.
      const workspace = tempRoot();
      const root = await profileRoot(workspace, workspace);
      expect(root).not.toBe(join(tmp, `capgate-browser-${process.getuid?.() ?? "user"}`));
      expect(root.startsWith(join(tmp, "capgate-browser-"))).toBe(true);
      expect(statSync(root).mode & 0o777).toBe(0o700);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  });

  it("and when no directory qualifies, the browser does not start, saying why", async () => {
    // A workspace of / holds both the state directory and the temp directory.
    const stateDir = tempRoot();
    await expect(profileRoot(stateDir, "/")).rejects.toThrow(
      /no private directory for its profile .*is inside the workspace \/.*stateDir/,
    );
  });
});
