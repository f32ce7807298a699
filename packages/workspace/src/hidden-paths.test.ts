// The path guard refuses the sandbox's hide list: a workspace that contains a home
// directory (HOME from the tool environment) or the state dir keeps ~/.ssh & co. and the
// state dir out of every tool's reach — by text, through links, through `..`, for missing
// files too — and writes that would carry one along (move, delete) are refused.
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HIDDEN_HOME_PATHS, hiddenPathAt, hiddenPathsOf } from "./hidden-paths.js";
import { resolveInWorkspace, type WorkspaceScope, workspaceHiddenPaths } from "./path-guard.js";

let base: string;
let ws: string;
let scope: WorkspaceScope;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "capgate-hidden-")));
  // The workspace IS the home of the tool environment (what `--workspace ~` gives a library user).
  ws = join(base, "home");
  mkdirSync(join(ws, ".ssh"), { recursive: true });
  writeFileSync(join(ws, ".ssh", "id_rsa"), "SECRET\n");
  mkdirSync(join(ws, ".config", "gcloud"), { recursive: true });
  writeFileSync(join(ws, ".config", "gcloud", "token"), "SECRET\n");
  mkdirSync(join(ws, ".config", "editor"), { recursive: true });
  writeFileSync(join(ws, ".netrc"), "SECRET\n");
  mkdirSync(join(ws, "state", "runs"), { recursive: true });
  writeFileSync(join(ws, "state", "runs", "r1.jsonl"), "SECRET\n");
  mkdirSync(join(ws, "project"));
  writeFileSync(join(ws, "project", "a.txt"), "fine\n");
  symlinkSync(join(ws, ".ssh", "id_rsa"), join(ws, "project", "key-link"));
  symlinkSync(join(ws, ".ssh"), join(ws, "ssh-dir-link"));
  scope = { workspace: ws, env: { HOME: ws }, stateDir: join(ws, "state") };
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

async function refusal(userPath: string, options = {}, on: WorkspaceScope = scope): Promise<CapgateError> {
  const error = await resolveInWorkspace(on, userPath, options).then(
    (p) => new Error(`expected a denial, resolved to ${p}`),
    (e: unknown) => e,
  );
  if (!CapgateError.isInstance(error)) throw error;
  return error;
}

describe("the path guard refuses the sandbox's hidden paths", () => {
  it.each([
    [".ssh/id_rsa", ".ssh"],
    [".ssh", ".ssh"],
    ["./.ssh/../.ssh/id_rsa", ".ssh"],
    ["project/../.ssh/id_rsa", ".ssh"],
    [".config/gcloud/token", ".config/gcloud"],
    [".netrc", ".netrc"],
    ["state/runs/r1.jsonl", "state"],
    ["state", "state"],
  ])("%s", async (path, hidden) => {
    const e = await refusal(path);
    expect(e.code).toBe("policy_denied");
    expect(e.property).toBe("path");
    expect(e.message).toContain(`is inside '${hidden}'`);
    expect(e.message).toMatch(/hidden from every tool and sandboxed command/);
  });

  it("an absolute path is judged the same", async () => {
    expect((await refusal(join(ws, ".ssh", "id_rsa"))).message).toContain("'.ssh' (~/.ssh)");
  });

  it("names the state directory as what it is", async () => {
    expect((await refusal("state/runs/r1.jsonl")).message).toMatch(/capgate's state directory/);
  });

  it("a missing file under a hidden path is refused like an existing one (no existence oracle)", async () => {
    const missing = await refusal(".ssh/id_ed25519_not_there", { allowMissing: true });
    const present = await refusal(".ssh/id_rsa", { allowMissing: true });
    expect(missing.code).toBe("policy_denied");
    expect(missing.message.replace("id_ed25519_not_there", "X")).toBe(present.message.replace("id_rsa", "X"));
    // Without allowMissing too: not `not_found`.
    expect((await refusal(".aws/credentials")).code).toBe("policy_denied");
  });

  it("links into a hidden path are refused (file link and directory link)", async () => {
    expect((await refusal("project/key-link")).message).toContain("is inside '.ssh'");
    expect((await refusal("ssh-dir-link/id_rsa")).message).toContain("is inside '.ssh'");
  });

  it("writes into a hidden path, and moves or deletes of a directory holding one, are refused", async () => {
    expect((await refusal(".ssh/authorized_keys", { forWrite: true, allowMissing: true })).message).toContain(
      "is inside '.ssh'",
    );
    const holder = await refusal(".config", { forWrite: true });
    expect(holder.message).toContain("contains '.config/gcloud'");
    expect(holder.message).toMatch(/moving or deleting/);
    // Its other entries stay writable; reading the holder itself (a listing) is allowed.
    expect(await resolveInWorkspace(scope, ".config/editor", { forWrite: true })).toBe(
      join(ws, ".config", "editor"),
    );
    expect(await resolveInWorkspace(scope, ".config")).toBe(join(ws, ".config"));
  });

  it("a hard link made outside capgate is a different name: out of scope, documented", async () => {
    // Documented in docs/security.md: the guard works on names; a hard link the user made
    // themselves is their own copy. (A sandboxed command cannot make one: ~/.ssh is a tmpfs there.)
    linkSync(join(ws, ".netrc"), join(ws, "project", "netrc-hardlink"));
    expect(await resolveInWorkspace(scope, "project/netrc-hardlink")).toBe(
      join(ws, "project", "netrc-hardlink"),
    );
    rmSync(join(ws, "project", "netrc-hardlink"));
  });

  it("everything else in the workspace resolves as before", async () => {
    expect(await resolveInWorkspace(scope, "project/a.txt")).toBe(join(ws, "project", "a.txt"));
    expect(await resolveInWorkspace(scope, ".")).toBe(ws);
  });

  it("a state dir equal to the workspace, or a hidden path holding the workspace, hides nothing", async () => {
    const project = join(ws, "project");
    const same: WorkspaceScope = { workspace: project, env: { HOME: ws }, stateDir: project };
    expect(await workspaceHiddenPaths(same)).toEqual([]);
    expect(await resolveInWorkspace(same, "a.txt")).toBe(join(project, "a.txt"));
    // A workspace under ~/.capgate (a worker's checkout) is not hidden from its own tools.
    const inner = join(ws, ".capgate", "worktrees", "w1");
    mkdirSync(inner, { recursive: true });
    writeFileSync(join(inner, "f.txt"), "x");
    const worker: WorkspaceScope = { workspace: inner, env: { HOME: ws } };
    expect(await resolveInWorkspace(worker, "f.txt")).toBe(join(inner, "f.txt"));
  });

  it("a workspace without a home or state dir inside has no hidden paths (the fast path)", async () => {
    const project = join(ws, "project");
    expect(await workspaceHiddenPaths({ workspace: project, env: { HOME: ws } })).toEqual([]);
  });
});

describe("one hide list", () => {
  it("the guard's set is the sandbox's set: every HIDDEN_HOME_PATHS entry under HOME, plus the state dir", () => {
    const all = hiddenPathsOf({ env: { HOME: ws }, stateDir: join(ws, "state") });
    for (const rel of HIDDEN_HOME_PATHS) {
      expect(hiddenPathAt(all, join(ws, rel, "anything")), rel).toBeDefined();
    }
    expect(hiddenPathAt(all, join(ws, "state", "runs"))?.label).toMatch(/state directory/);
    // A symlinked hidden path is hidden where it leads too.
    expect(hiddenPathAt(all, join(ws, ".ssh", "id_rsa"))).toBeDefined();
    expect(hiddenPathAt(all, join(ws, "project", "a.txt"))).toBeUndefined();
  });
});

describe("a hidden path that leads into the workspace through links", () => {
  // HOME outside the workspace; its secrets reach into the workspace only through links.
  let root: string;
  let home: string;
  let work: string;
  let linked: WorkspaceScope;
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-hidden-links-")));
    home = join(root, "home");
    work = join(root, "ws");
    mkdirSync(join(home), { recursive: true });
    mkdirSync(join(work, "cfg", "editor"), { recursive: true });
    mkdirSync(join(work, "dot"), { recursive: true });
    mkdirSync(join(work, "vault"), { recursive: true });
    writeFileSync(join(work, "vault", "id_rsa"), "SECRET\n");
    // ~/.ssh → ws/dot/ssh → ../vault (two links); ~/.aws → ws/dotaws (missing yet);
    // ~/.config → ws/cfg, whose gh/ does not exist yet.
    symlinkSync(join(work, "dot", "ssh"), join(home, ".ssh"));
    symlinkSync("../vault", join(work, "dot", "ssh"));
    symlinkSync(join(work, "dotaws"), join(home, ".aws"));
    symlinkSync(join(work, "cfg"), join(home, ".config"));
    linked = { workspace: work, env: { HOME: home } };
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("a dangling link's target is hidden before anything creates it (no planting ~/.aws/config)", async () => {
    const e = await refusal("dotaws/config", { forWrite: true, allowMissing: true }, linked);
    expect(e.code).toBe("policy_denied");
    expect(e.message).toContain("~/.aws");
    expect((await refusal("dotaws", { forWrite: true, allowMissing: true }, linked)).code).toBe(
      "policy_denied",
    );
  });

  it("a missing secret under a linked parent is hidden where it would be created (~/.config/gh)", async () => {
    const e = await refusal("cfg/gh/hosts.yml", { forWrite: true, allowMissing: true }, linked);
    expect(e.message).toContain("~/.config/gh");
    // The rest of the linked ~/.config stays reachable.
    expect(await resolveInWorkspace(linked, "cfg/editor")).toBe(join(work, "cfg", "editor"));
  });

  it("every link of the chain is hidden: the secret cannot be un-hidden by moving or deleting one", async () => {
    expect((await refusal("vault/id_rsa", {}, linked)).message).toContain("~/.ssh");
    // ws/dot/ssh is a link on the way from ~/.ssh to the vault: moving dot would break the chain.
    const move = await refusal("dot", { forWrite: true }, linked);
    expect(move.message).toContain("would take it along");
    expect((await refusal("dot/ssh", { forWrite: true }, linked)).code).toBe("policy_denied");
    expect((await refusal("dot/ssh/id_rsa", {}, linked)).code).toBe("policy_denied");
  });

  it("the walk gives up on a link loop without hiding anything wrongly or throwing", () => {
    const loopHome = join(root, "loop-home");
    mkdirSync(loopHome);
    symlinkSync(join(loopHome, ".ssh"), join(loopHome, ".ssh-b"));
    symlinkSync(join(loopHome, ".ssh-b"), join(loopHome, ".ssh"));
    const all = hiddenPathsOf({ env: { HOME: loopHome } });
    expect(hiddenPathAt(all, join(loopHome, ".ssh", "x"))).toBeDefined();
  });
});

describe("the policy-file scan of a tree about to move never looks into a hidden path", () => {
  it("a link into ~/.ssh is not followed: nothing under it is found, named or counted", async () => {
    const { scanForPolicyFile } = await import("./policy-tree-scan.js");
    const r = realpathSync(mkdtempSync(join(tmpdir(), "capgate-hidden-scan-")));
    try {
      const h = join(r, "home");
      const w = join(r, "ws");
      mkdirSync(join(w, "keys", "prod-db-2024"), { recursive: true });
      writeFileSync(join(w, "keys", "prod-db-2024", "capgate.config.json"), "{}");
      mkdirSync(join(w, "d"));
      mkdirSync(h);
      symlinkSync(join(w, "keys"), join(h, ".ssh"));
      symlinkSync("../keys", join(w, "d", "l"));
      const hidden = await workspaceHiddenPaths({ workspace: w, env: { HOME: h } });
      expect(await scanForPolicyFile(w, join(w, "d"))).toMatchObject({ kind: "found" });
      // Only the link itself is looked at, not where it leads.
      expect(await scanForPolicyFile(w, join(w, "d"), undefined, hidden)).toEqual({
        kind: "clean",
        entries: 1,
      });
      // The whole workspace: the hidden directory's entries are not among those counted.
      expect(await scanForPolicyFile(w, w, undefined, hidden)).toEqual({ kind: "clean", entries: 2 }); // d and d/l
    } finally {
      rmSync(r, { recursive: true, force: true });
    }
  });
});
