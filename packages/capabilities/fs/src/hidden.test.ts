import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExecuteContext } from "@capgate/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type Fixture, makeFixture, rejection, snapshot } from "./test-support.js";

// A workspace that holds a home directory (the tool environment's HOME) and the state dir:
// every fs tool keeps ~/.ssh & co. and the state dir out of reach — the same hide list the
// sandbox applies to shell commands — and the walkers never show a name under them.

let fx: Fixture;
let ctx: ExecuteContext;
const SECRET = "TOPSECRET-4711";

beforeAll(() => {
  fx = makeFixture();
  const ws = fx.ws;
  for (const [path, body] of [
    [".ssh/id_rsa", `${SECRET} ssh\n`],
    [".aws/credentials", `${SECRET} aws\n`],
    [".gnupg/private-keys-v1.d/key", `${SECRET} gpg\n`],
    [".config/gcloud/credentials.db", `${SECRET} gcloud\n`],
    [".config/editor/settings.json", "{}\n"],
    [".netrc", `${SECRET} netrc\n`],
    ["state/runs/r1.jsonl", `${SECRET} trace\n`],
    ["project/notes.txt", `${SECRET} is the word the model may find here\n`],
  ] as const) {
    mkdirSync(join(ws, path, ".."), { recursive: true });
    writeFileSync(join(ws, path), body);
  }
  symlinkSync(join(ws, ".ssh", "id_rsa"), join(ws, "project", "key"));
  symlinkSync(join(ws, ".aws"), join(ws, "project", "aws"));
  ctx = { ...fx.ctx, env: { ...fx.ctx.env, HOME: ws }, stateDir: join(ws, "state") };
});
afterAll(() => fx.cleanup());

describe("fs tools refuse the hidden paths", { timeout: 30_000 }, () => {
  it.each([
    ["fs.read", { path: ".ssh/id_rsa" }, "path", ".ssh"],
    ["fs.read", { path: "project/key" }, "path", ".ssh"],
    ["fs.read", { path: "project/aws/credentials" }, "path", ".aws"],
    ["fs.read", { path: "project/../.netrc" }, "path", ".netrc"],
    ["fs.read", { path: "state/runs/r1.jsonl" }, "path", "state"],
    ["fs.read", { path: ".ssh/not-there" }, "path", ".ssh"],
    ["fs.list", { path: ".aws" }, "path", ".aws"],
    ["fs.list", { path: ".gnupg/private-keys-v1.d" }, "path", ".gnupg"],
    ["fs.search", { pattern: "SECRET", path: ".gnupg" }, "path", ".gnupg"],
    ["fs.glob", { pattern: "*", path: ".config/gcloud" }, "path", ".config/gcloud"],
    ["fs.stat", { path: ".ssh/id_rsa" }, "path", ".ssh"],
    ["fs.stat", { path: ".ssh/missing" }, "path", ".ssh"],
    ["fs.write", { path: ".ssh/authorized_keys", content: "ssh-ed25519 AAAA model\n" }, "path", ".ssh"],
    ["fs.patch", { path: ".netrc", old: "netrc", new: "x" }, "path", ".netrc"],
    ["fs.mkdir", { path: ".aws/new" }, "path", ".aws"],
    ["fs.delete", { path: ".aws" }, "path", ".aws"],
    ["fs.move", { from: ".ssh", to: "project/ssh-copy" }, "from", ".ssh"],
    ["fs.move", { from: "project/notes.txt", to: ".ssh/notes.txt" }, "to", ".ssh"],
  ] as const)("%s %j", async (tool, args, property, hidden) => {
    const before = snapshot(fx.ws);
    const error = await rejection(ctx, tool, args);
    expect(error.code, error.message).toBe("policy_denied");
    expect(error.property).toBe(property);
    expect(error.message).toContain(`is inside '${hidden}'`);
    expect(error.message).not.toContain(SECRET);
    expect(snapshot(fx.ws)).toEqual(before);
  });

  it("a directory holding a hidden path cannot be moved or deleted (it would take the secret along)", async () => {
    const before = snapshot(fx.ws);
    for (const [tool, args, property] of [
      ["fs.delete", { path: ".config" }, "path"],
      ["fs.move", { from: ".config", to: "project/config" }, "from"],
    ] as const) {
      const error = await rejection(ctx, tool, args);
      expect(error.property).toBe(property);
      expect(error.message).toContain("contains '.config/gcloud'");
    }
    expect(snapshot(fx.ws)).toEqual(before);
  });

  it("fs.list never shows a hidden entry, at any depth, and says some were left out", async () => {
    const r = await call(ctx, "fs.list", { path: ".", depth: 4 });
    expect(r.success).toBe(true);
    const paths = (r.data as { entries: { path: string }[] }).entries.map((e) => e.path);
    expect(paths).toContain(".config/editor/settings.json");
    // The links in project/ are listed as links (their text is shown, never followed).
    expect(paths).toContain("project/key");
    for (const path of paths)
      expect(path).not.toMatch(/^(\.ssh|\.aws|\.gnupg|\.config\/gcloud|\.netrc|state)(\/|$)/);
    for (const line of r.summary.split("\n").filter((l) => !l.includes(" -> "))) {
      expect(line).not.toMatch(/id_rsa|\.gnupg|gcloud|\.netrc|r1\.jsonl/);
    }
    expect(r.summary).toMatch(/hidden entr(y|ies) not shown/);
  });

  it("fs.search over the whole workspace finds the word only outside the hidden paths", async () => {
    const r = await call(ctx, "fs.search", { pattern: SECRET, path: "." });
    expect(r.success).toBe(true);
    expect(r.summary).toContain("project/notes.txt");
    for (const name of ["id_rsa", "credentials", "private-keys", ".netrc", "r1.jsonl"]) {
      expect(r.summary).not.toContain(name);
    }
  });

  it("fs.glob never yields a hidden file, even for a pattern naming it", async () => {
    for (const pattern of ["**/*", "**/id_rsa", ".ssh/*", "**/credentials*", "state/**"]) {
      const r = await call(ctx, "fs.glob", { pattern });
      expect(r.success, r.summary).toBe(true);
      const files = (r.data as { files: string[] }).files;
      for (const file of files)
        expect(file, pattern).not.toMatch(/id_rsa|credentials|gcloud|\.netrc|r1\.jsonl/);
    }
    const all = await call(ctx, "fs.glob", { pattern: "**/*" });
    expect(all.summary).toContain(".config/editor/settings.json");
  });

  it("a directory whose only entries are hidden says so instead of 'empty'", async () => {
    mkdirSync(join(fx.ws, ".local", "share", "keyrings"), { recursive: true });
    writeFileSync(join(fx.ws, ".local", "share", "keyrings", "login.keyring"), `${SECRET}\n`);
    const r = await call(ctx, "fs.list", { path: ".local/share" });
    expect(r.success).toBe(true);
    expect(r.summary).toBe(
      ".local/share/ holds nothing to show: its 1 entry is hidden (credentials under HOME and capgate's state directory are never listed).",
    );
    const only = await call(ctx, "fs.list", { path: ".config" });
    expect(only.summary).toContain(".config/editor/");
    expect(only.summary).toMatch(/1 hidden entry not shown/);
  });

  it("a not-found hint never suggests a hidden name", async () => {
    const r = await call(ctx, "fs.read", { path: ".sshh" });
    expect(r.success).toBe(false);
    expect(r.summary).not.toContain("'.ssh'");
  });

  it("the same tools work normally when the workspace holds no home (the default context)", async () => {
    const r = await call(fx.ctx, "fs.read", { path: ".ssh/id_rsa" });
    expect(r.success).toBe(true);
  });
});
