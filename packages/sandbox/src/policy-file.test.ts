// The workspace's capgate.config.json is capgate's policy: a model must not be able to
// choose its own rules for the next run. Real bubblewrap for the shell side; a control run
// with the sandbox off shows each attack works when nothing stops it.
// CI sets CAPGATE_REQUIRE_SYSTEM_TESTS=1: a missing bwrap fails there instead of skipping.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CapgateError } from "@capgate/schema";
import { needs } from "@capgate/test-system-parts";
import type { ShellPolicyConfig } from "@capgate/tools";
import { POLICY_FILE_NAME, resolveInWorkspace } from "@capgate/workspace";
import { afterAll, describe, expect, it } from "vitest";
import { currentOwner } from "./process-owner.js";
import { runShell } from "./run-shell.js";
import {
  journalClock,
  journalSandbox,
  policyFilesOfRunningSandboxes,
  recoverInterruptedSandboxes,
} from "./sandbox-journal.js";
import { closeEgressProxies } from "./sandbox-proxy.js";
import type { ShellCheck } from "./shell-check.js";

const system = needs(["bwrap"]);
const check: ShellCheck = async () => ({ decision: "allow" });
const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-policy-file-")));
const RULES = '{"shell":{"deny":[{"prefix":["git","push"]}]}}\n';
let n = 0;

afterAll(async () => {
  await closeEgressProxies();
  rmSync(root, { recursive: true, force: true });
});

function workspace(withPolicy: boolean): string {
  const ws = join(root, `ws${++n}`);
  mkdirSync(join(ws, "sub"), { recursive: true });
  if (withPolicy) writeFileSync(join(ws, POLICY_FILE_NAME), RULES);
  return ws;
}

const sh = (ws: string, command: string, policy: ShellPolicyConfig = { network: "none" }) =>
  runShell({
    command,
    check,
    cwd: ws,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, LANG: "C" },
    policy,
    sandbox: { workspace: ws },
    timeoutMs: 30_000,
  });

describe("file tools never write the policy file", () => {
  it("refuses writing, creating, moving onto or deleting it, at any depth and in any letter case; reading stays allowed", async () => {
    const ws = workspace(true);
    for (const path of [
      POLICY_FILE_NAME,
      "./capgate.config.json",
      "sub/../capgate.config.json",
      "sub/Capgate.Config.JSON",
    ]) {
      const error = await resolveInWorkspace(ws, path, { forWrite: true, allowMissing: true }).then(
        () => undefined,
        (e: unknown) => e as CapgateError,
      );
      expect(error?.code, path).toBe("policy_denied");
      expect(error?.message, path).toContain("capgate's own policy file");
    }
    expect(await resolveInWorkspace(ws, POLICY_FILE_NAME)).toBe(join(ws, POLICY_FILE_NAME));
    expect(
      await resolveInWorkspace(ws, "capgate.config.json.bak", { forWrite: true, allowMissing: true }),
    ).toBe(join(ws, "capgate.config.json.bak"));
  });
});

describe.skipIf(system.skip)(
  `a sandboxed command and the policy file${system.note}`,
  { timeout: 60_000 },
  () => {
    it("cannot change, replace or delete an existing one (it can without the sandbox)", async () => {
      const control = workspace(true);
      await sh(control, `echo '{}' > ${POLICY_FILE_NAME}`, { sandbox: "off" });
      expect(readFileSync(join(control, POLICY_FILE_NAME), "utf8")).toBe("{}\n");

      const ws = workspace(true);
      const result = await sh(
        ws,
        `echo '{}' > ${POLICY_FILE_NAME}; mv ${POLICY_FILE_NAME} old; rm -f ${POLICY_FILE_NAME}; cat ${POLICY_FILE_NAME}`,
      );
      expect(result.stdout).toBe(RULES);
      expect(readFileSync(join(ws, POLICY_FILE_NAME), "utf8")).toBe(RULES);
    });

    it("the working directory's policy file cannot be carried away with its directory (round four)", async () => {
      // The operator runs capgate from <ws>/app; the model's command runs from the root and
      // moves app away, puts a directory of its own there, with a policy of its own.
      const attack = `mv app old && mkdir app && echo '{}' > app/${POLICY_FILE_NAME}`;
      const setup = () => {
        const ws = workspace(false);
        mkdirSync(join(ws, "app", "src"), { recursive: true });
        writeFileSync(join(ws, "app", POLICY_FILE_NAME), RULES);
        return ws;
      };
      const before = process.cwd();
      try {
        const control = setup();
        process.chdir(join(control, "app"));
        await sh(control, attack, { sandbox: "off" });
        expect(readFileSync(join(control, "app", POLICY_FILE_NAME), "utf8")).toBe("{}\n");

        const ws = setup();
        process.chdir(join(ws, "app"));
        const result = await sh(ws, `${attack}; rm -rf app; cat app/${POLICY_FILE_NAME}`);
        expect(result.stdout).toBe(RULES);
        expect(readFileSync(join(ws, "app", POLICY_FILE_NAME), "utf8")).toBe(RULES);
        expect(existsSync(join(ws, "old"))).toBe(false);
        // The directory's other contents stay the command's to change.
        expect((await sh(ws, "mkdir -p app/src/new && mv app/src app/lib && ls app")).stdout).toContain(
          "lib",
        );
      } finally {
        process.chdir(before);
      }
    });

    it("a policy file that is a symbolic link is refused before anything runs", async () => {
      const ws = workspace(false);
      mkdirSync(join(ws, "conf"));
      writeFileSync(join(ws, "conf", "policy.json"), RULES);
      symlinkSync("conf/policy.json", join(ws, POLICY_FILE_NAME));
      await expect(sh(ws, `rm ${POLICY_FILE_NAME}; echo '{}' > ${POLICY_FILE_NAME}`)).rejects.toMatchObject({
        code: "unsafe_policy_file",
      });
      expect(lstatSync(join(ws, POLICY_FILE_NAME)).isSymbolicLink()).toBe(true);
    });

    it("one it creates is renamed aside when it ends, and the output says so", async () => {
      const ws = workspace(false);
      const result = await sh(ws, `echo '{}' > ${POLICY_FILE_NAME}`);
      expect(result.exitCode).toBe(0);
      expect(existsSync(join(ws, POLICY_FILE_NAME))).toBe(false);
      const aside = readdirSync(ws).filter((e) =>
        /^capgate\.config\.json\.capgate-disabled-[0-9a-f]{12}$/.test(e),
      );
      expect(aside).toHaveLength(1);
      expect(readFileSync(join(ws, aside[0]!), "utf8")).toBe("{}\n"); // nothing lost
      expect(result.stderr).toContain(`capgate renamed it to ${aside[0]}`);
    });
  },
);

/** Write a file once the clock has moved on (ctime granularity is a few ms), as a command running after its record. */
function writeLater(path: string, text: string): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15);
  writeFileSync(path, text);
}

describe("the sandbox journal: whose process is gone (ownerGone, shared with browser profiles)", () => {
  /** One journal entry with a policy file its command "created"; returns what recovery did. */
  function recoverWith(owner: unknown, pid: number): { notices: string[]; kept: boolean } {
    const state = mkdtempSync(join(tmpdir(), "capgate-journal-owner-"));
    const ws = mkdtempSync(join(tmpdir(), "capgate-journal-ws-"));
    try {
      mkdirSync(join(state, "sandboxes"), { recursive: true });
      const created = join(ws, "capgate.config.json");
      const entry = {
        pid,
        pidns: currentOwner().pidNamespace,
        owner,
        workspace: ws,
        missingPolicyFiles: [created],
      };
      writeFileSync(join(state, "sandboxes", "e.json"), JSON.stringify(entry));
      // The command makes the policy file after its record was written.
      writeLater(created, "{}");
      const notices = recoverInterruptedSandboxes(state);
      return { notices, kept: existsSync(join(state, "sandboxes", "e.json")) && existsSync(created) };
    } finally {
      rmSync(state, { recursive: true, force: true });
      rmSync(ws, { recursive: true, force: true });
    }
  }
  const self = currentOwner();
  const dead = 2 ** 22 + 11;

  it("records the owner when a sandbox starts", () => {
    const state = mkdtempSync(join(tmpdir(), "capgate-journal-rec-"));
    try {
      const release = journalSandbox(state, "m", { workspace: "/nowhere", missingPolicyFiles: [] });
      const record = JSON.parse(readFileSync(join(state, "sandboxes", "m.json"), "utf8"));
      expect(record.owner).toEqual(self);
      release();
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });

  it("a pid of this machine, boot and namespace that no longer exists: recovered", () => {
    const r = recoverWith({ ...self, pid: dead, start: "1" }, dead);
    expect(r.kept).toBe(false);
    expect(r.notices.join(" ")).toContain("renamed it to");
  });

  it.skipIf(process.platform !== "linux")(
    "a pid that exists but was reused (another start time): recovered, not waited on forever",
    () => {
      // The parent (vitest's) exists; the record says it started at another time.
      const r = recoverWith({ ...self, pid: process.ppid, start: "1" }, process.ppid);
      expect(r.kept).toBe(false);
    },
  );

  it("recovery renames only policy files inside the entry's own workspace, whatever a record names", () => {
    const state = mkdtempSync(join(tmpdir(), "capgate-journal-forged-"));
    const ws = mkdtempSync(join(tmpdir(), "capgate-journal-ws-"));
    const other = mkdtempSync(join(tmpdir(), "capgate-journal-other-"));
    try {
      mkdirSync(join(state, "sandboxes"), { recursive: true });
      const outside = join(other, "capgate.config.json");
      const notPolicy = join(ws, "notes.txt");
      const sneaky = join(ws, "sub", "..", "..", other.split("/").pop()!, "capgate.config.json");
      for (const f of [outside, notPolicy]) writeFileSync(f, "x");
      const entry = { pid: dead, workspace: ws, missingPolicyFiles: [outside, notPolicy, sneaky, 7] };
      writeFileSync(join(state, "sandboxes", "forged.json"), JSON.stringify(entry));
      recoverInterruptedSandboxes(state);
      expect(readdirSync(other)).toEqual(["capgate.config.json"]);
      expect(readdirSync(ws)).toEqual(["notes.txt"]);
    } finally {
      for (const d of [state, ws, other]) rmSync(d, { recursive: true, force: true });
    }
  });

  it("a record never acts on what is older than itself: the user's policy file, a bare repository's HEAD", () => {
    // The clock slack (10 s: file systems of coarse timestamps, a file server's lagging clock) made short.
    const slack = journalClock.slackMs;
    journalClock.slackMs = 5;
    const state = mkdtempSync(join(tmpdir(), "capgate-journal-old-"));
    const ws = mkdtempSync(join(tmpdir(), "capgate-journal-ws-"));
    const bare = mkdtempSync(join(tmpdir(), "capgate-journal-bare-"));
    try {
      mkdirSync(join(state, "sandboxes"), { recursive: true });
      const policy = join(ws, "capgate.config.json");
      writeFileSync(policy, '{"shell":{"network":"none"}}');
      execFileSync("git", ["init", "-q", "--bare", bare]);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15);
      // Records planted after both (a dead owner, then one that never ends): nothing renamed,
      // and the user's policy file is not taken for a running command's.
      const records = [
        { pid: dead, workspace: ws, missingPolicyFiles: [policy] },
        { pid: dead, workspace: bare, missingPolicyFiles: [] },
        { pid: 1, owner: { pid: 1, machine: "elsewhere" }, workspace: ws, missingPolicyFiles: [policy] },
      ];
      for (const [i, r] of records.entries())
        writeFileSync(join(state, "sandboxes", `r${i}.json`), JSON.stringify(r));
      // Nothing renamed; the operator is told the record's claim was not taken.
      const notices = recoverInterruptedSandboxes(state).join(" ");
      expect(notices).not.toContain("renamed");
      expect(notices).toContain("is older than the command's record");
      expect(readdirSync(ws)).toEqual(["capgate.config.json"]);
      expect(existsSync(join(bare, "HEAD"))).toBe(true);
      expect(policyFilesOfRunningSandboxes(state)).toEqual([]);
      // The same policy file made after a running record was written: not policy yet.
      rmSync(policy);
      writeLater(policy, "{}");
      expect(policyFilesOfRunningSandboxes(state)).toEqual([{ path: policy, pid: 1 }]);
    } finally {
      journalClock.slackMs = slack;
      for (const d of [state, ws, bare]) rmSync(d, { recursive: true, force: true });
    }
  });

  it("a file that looks a little older than its record (coarse timestamps, a lagging clock) is still the command's", () => {
    const state = mkdtempSync(join(tmpdir(), "capgate-journal-coarse-"));
    const ws = mkdtempSync(join(tmpdir(), "capgate-journal-ws-"));
    try {
      mkdirSync(join(state, "sandboxes"), { recursive: true });
      const created = join(ws, "capgate.config.json");
      // As on a file system of 1 s timestamps: the file's time rounds down below the record's.
      writeFileSync(created, "{}");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15);
      const record = {
        pid: dead,
        owner: { ...self, pid: dead, start: "1" },
        workspace: ws,
        missingPolicyFiles: [created],
      };
      writeFileSync(join(state, "sandboxes", "c.json"), JSON.stringify(record));
      expect(recoverInterruptedSandboxes(state).join(" ")).toContain("renamed it to");
      expect(existsSync(created)).toBe(false);
    } finally {
      rmSync(state, { recursive: true, force: true });
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it("a record of a process running here for certain sets its files aside whatever their age (fail closed)", () => {
    const state = mkdtempSync(join(tmpdir(), "capgate-journal-live-"));
    const ws = mkdtempSync(join(tmpdir(), "capgate-journal-ws-"));
    const slack = journalClock.slackMs;
    journalClock.slackMs = 5;
    try {
      mkdirSync(join(state, "sandboxes"), { recursive: true });
      const policy = join(ws, "capgate.config.json");
      writeFileSync(policy, "{}");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15);
      const live = { pid: process.pid, owner: self, workspace: ws, missingPolicyFiles: [policy] };
      writeFileSync(join(state, "sandboxes", "l.json"), JSON.stringify(live));
      expect(policyFilesOfRunningSandboxes(state)).toEqual([{ path: policy, pid: process.pid }]);
    } finally {
      journalClock.slackMs = slack;
      rmSync(state, { recursive: true, force: true });
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it("another machine sharing the state directory, or a damaged owner record: kept", () => {
    expect(recoverWith({ ...self, pid: dead, machine: "another@host" }, dead).kept).toBe(true);
    expect(recoverWith({ pid: "x" }, dead).kept).toBe(true);
    expect(recoverWith({ ...self, pid: dead + 1 }, dead).kept).toBe(true);
  });
});

describe("the sandbox journal across pid namespaces", () => {
  it("an entry of another pid namespace counts as running: neither recovered nor forgotten", () => {
    const state = mkdtempSync(join(tmpdir(), "capgate-journal-ns-"));
    const ws = mkdtempSync(join(tmpdir(), "capgate-journal-ws-"));
    try {
      mkdirSync(join(state, "sandboxes"), { recursive: true });
      const created = join(ws, "capgate.config.json");
      // A pid this namespace cannot see (no such process here), recorded from another namespace.
      const entry = { pid: 2 ** 22 + 7, pidns: "pid:[1]", workspace: ws, missingPolicyFiles: [created] };
      writeFileSync(join(state, "sandboxes", "other.json"), JSON.stringify(entry));
      writeLater(created, "{}"); // made by the command, after its record
      expect(recoverInterruptedSandboxes(state)).toEqual([]);
      expect(existsSync(created)).toBe(true);
      expect(existsSync(join(state, "sandboxes", "other.json"))).toBe(true);
      expect(policyFilesOfRunningSandboxes(state)).toEqual([{ path: created, pid: entry.pid }]);
      // The same pid recorded in this namespace (or by a capgate from before namespaces were recorded) is gone: recovered.
      writeFileSync(join(state, "sandboxes", "other.json"), JSON.stringify({ ...entry, pidns: undefined }));
      writeLater(created, "{}");
      expect(recoverInterruptedSandboxes(state).join(" ")).toContain("renamed it to");
      expect(existsSync(created)).toBe(false);
    } finally {
      rmSync(state, { recursive: true, force: true });
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
