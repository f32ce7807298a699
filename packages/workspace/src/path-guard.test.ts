import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CapgateError } from "@capgate/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isInside, resolveInWorkspace } from "./path-guard.js";

let base: string;
let ws: string;
let outside: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "capgate-path-")));
  ws = join(base, "proj");
  outside = join(base, "outside");
  mkdirSync(join(ws, "src"), { recursive: true });
  mkdirSync(outside);
  mkdirSync(join(base, "proj2"));
  writeFileSync(join(ws, "src", "a.ts"), "a");
  writeFileSync(join(outside, "secret.txt"), "secret");
  writeFileSync(join(base, "proj2", "x.txt"), "x");
  symlinkSync(join(outside, "secret.txt"), join(ws, "file-out"));
  symlinkSync(outside, join(ws, "dir-out"));
  symlinkSync(join(ws, "src", "a.ts"), join(ws, "link-in"));
  symlinkSync(join(ws, "src"), join(ws, "src-link"));
  symlinkSync(join(ws, "nowhere"), join(ws, "dangling"));
  symlinkSync(join(ws, "loop-b"), join(ws, "loop-a"));
  symlinkSync(join(ws, "loop-a"), join(ws, "loop-b"));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

async function denied(userPath: string, options = {}): Promise<CapgateError> {
  const error = await resolveInWorkspace(ws, userPath, options).then(
    (p) => {
      throw new Error(`expected a denial, resolved to ${p}`);
    },
    (e: unknown) => e,
  );
  expect(CapgateError.isInstance(error)).toBe(true);
  return error as CapgateError;
}

describe("resolveInWorkspace", () => {
  it("resolves relative and absolute paths inside the workspace to real paths", async () => {
    expect(await resolveInWorkspace(ws, "src/a.ts")).toBe(join(ws, "src", "a.ts"));
    expect(await resolveInWorkspace(ws, join(ws, "src", "a.ts"))).toBe(join(ws, "src", "a.ts"));
    expect(await resolveInWorkspace(ws, "src/../src/./a.ts")).toBe(join(ws, "src", "a.ts"));
    expect(await resolveInWorkspace(ws, ".")).toBe(ws);
    // A symlink that stays inside is followed for reads, and the real path is returned.
    expect(await resolveInWorkspace(ws, "link-in")).toBe(join(ws, "src", "a.ts"));
  });

  it("rejects ../ escapes with the argument name as property", async () => {
    const e = await denied("../outside/secret.txt", { property: "from" });
    expect(e.code).toBe("policy_denied");
    expect(e.property).toBe("from");
    expect(e.message).toMatch(/climbs out of the workspace/);
    expect((await denied("src/../../outside")).code).toBe("policy_denied");
  });

  it("rejects absolute paths outside the workspace", async () => {
    const e = await denied("/etc/passwd");
    expect(e.message).toMatch(/outside the workspace/);
    expect(e.property).toBe("path");
  });

  it("rejects a sibling directory sharing the prefix (/w/proj2 vs /w/proj)", async () => {
    expect(isInside(ws, `${ws}2/x.txt`)).toBe(false);
    expect((await denied(join(base, "proj2", "x.txt"))).message).toMatch(/outside the workspace/);
    expect((await denied("../proj2/x.txt")).code).toBe("policy_denied");
  });

  it("rejects a symlinked file pointing outside", async () => {
    const e = await denied("file-out");
    expect(e.message).toMatch(/outside the workspace .*symbolic link/);
  });

  it("rejects a symlinked directory pointing outside, for reads and for new files under it", async () => {
    expect((await denied("dir-out/secret.txt")).code).toBe("policy_denied");
    const e = await denied("dir-out/new/file.txt", { forWrite: true, allowMissing: true });
    expect(e.message).toMatch(/outside the workspace/);
  });

  it("explains dangling symlinks", async () => {
    expect((await denied("dangling")).message).toMatch(/dangling symbolic link/);
    expect((await denied("dangling", { forWrite: true, allowMissing: true })).message).toMatch(
      /writes never go through a symlink/,
    );
    expect((await denied("dangling/child.txt", { allowMissing: true })).message).toMatch(/dangling/);
  });

  it("explains symlink loops", async () => {
    expect((await denied("loop-a")).message).toMatch(/symbolic link loop/);
    expect((await denied("loop-a/x", { allowMissing: true })).message).toMatch(/symbolic link loop/);
  });

  it("rejects NUL bytes", async () => {
    expect((await denied("src/a.ts\0.png")).message).toMatch(/NUL byte/);
  });

  it("rejects over-long paths and components", async () => {
    expect((await denied("a/".repeat(2100))).message).toMatch(/limit is 4096/);
    expect((await denied(`${"x".repeat(256)}.txt`, { allowMissing: true })).message).toMatch(/limit is 255/);
  });

  it("never writes through a symlink, even one inside the workspace", async () => {
    const e = await denied("link-in", { forWrite: true });
    expect(e.message).toMatch(/writes never go through a symlink/);
    // Reading through it is fine, and writing under a symlinked directory that resolves inside is fine.
    expect(await resolveInWorkspace(ws, "src-link/a.ts", { forWrite: true })).toBe(join(ws, "src", "a.ts"));
  });

  it("resolves a new nested file whose parents do not exist yet", async () => {
    expect(await resolveInWorkspace(ws, "new/deeper/file.txt", { forWrite: true, allowMissing: true })).toBe(
      join(ws, "new", "deeper", "file.txt"),
    );
    expect(await resolveInWorkspace(ws, "src-link/n/f.txt", { forWrite: true, allowMissing: true })).toBe(
      join(ws, "src", "n", "f.txt"),
    );
  });

  it("reports a missing path as not_found unless allowMissing", async () => {
    const e = await denied("src/missing.ts");
    expect(e.code).toBe("not_found");
    expect(e.property).toBe("path");
    const f = await denied("src/a.ts/child", { allowMissing: true });
    expect(f.code).toBe("not_found");
    expect(f.message).toMatch(/not a directory/);
  });

  it("refuses to write the workspace root itself", async () => {
    expect((await denied(".", { forWrite: true })).message).toMatch(/workspace root itself/);
  });

  it("rejects empty and non-string paths clearly", async () => {
    expect((await denied("")).message).toMatch(/empty/);
    expect((await denied(42 as unknown as string)).message).toMatch(/must be a string/);
  });
});

describe("repository directories by another name (separate git dir, bare repository)", () => {
  it("refuses writes inside a directory git takes for a repository, whatever it is called; reads stay allowed", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-path-repo-")));
    try {
      const w = join(root, "ws");
      // What `git init --separate-git-dir=.repo` leaves: a .git file and the repository under another name.
      mkdirSync(join(w, ".repo", "objects"), { recursive: true });
      mkdirSync(join(w, ".repo", "refs"));
      mkdirSync(join(w, ".repo", "hooks"));
      writeFileSync(join(w, ".repo", "HEAD"), "ref: refs/heads/main\n");
      writeFileSync(join(w, ".repo", "config"), "[core]\n");
      writeFileSync(join(w, ".git"), `gitdir: ${join(w, ".repo")}\n`);
      for (const path of [".repo/config", ".repo/hooks/pre-commit", ".repo", "./.repo/../.repo/HEAD"]) {
        const error = await resolveInWorkspace(w, path, { forWrite: true, allowMissing: true }).then(
          () => undefined,
          (e: unknown) => e as CapgateError,
        );
        expect(error?.code, path).toBe("policy_denied");
        expect(error?.message, path).toMatch(/'\.repo', a git repository directory/);
      }
      expect(await resolveInWorkspace(w, ".repo/config")).toBe(join(w, ".repo", "config"));

      // A folder that only shares some of the names is an ordinary folder.
      mkdirSync(join(w, "data", "objects"), { recursive: true });
      mkdirSync(join(w, "data", "refs"));
      expect(await resolveInWorkspace(w, "data/refs/x.json", { forWrite: true, allowMissing: true })).toBe(
        join(w, "data", "refs", "x.json"),
      );

      // The last piece of the layout is refused too, in whichever order the pieces come: a
      // `config` written first would otherwise become a repository's config with it.
      const pieces: [string, string][] = [
        ["HEAD", "data/HEAD"],
        ["objects", "data2/objects/info/packs"],
        ["refs", "data3/refs/heads/main"],
      ];
      mkdirSync(join(w, "data2", "refs"), { recursive: true });
      writeFileSync(join(w, "data2", "HEAD"), "ref: refs/heads/main\n");
      mkdirSync(join(w, "data3", "objects"), { recursive: true });
      symlinkSync("elsewhere", join(w, "data3", "HEAD")); // git accepts a linked HEAD
      for (const [piece, path] of pieces) {
        const error = await resolveInWorkspace(w, path, { forWrite: true, allowMissing: true }).then(
          () => undefined,
          (e: unknown) => e as CapgateError,
        );
        expect(error?.code, path).toBe("policy_denied");
        expect(error?.message, path).toContain(`with '${piece}' beside the`);
      }
      // HEAD with a commondir is a repository directory too (objects and refs live where
      // commondir points): whichever of the two comes second is refused.
      mkdirSync(join(w, "wt1"));
      writeFileSync(join(w, "wt1", "HEAD"), "ref: refs/heads/main\n");
      mkdirSync(join(w, "wt2"));
      writeFileSync(join(w, "wt2", "commondir"), "../sub\n");
      for (const [piece, path] of [
        ["commondir", "wt1/commondir"],
        ["HEAD", "wt2/HEAD"],
      ] as const) {
        const error = await resolveInWorkspace(w, path, { forWrite: true, allowMissing: true }).then(
          () => undefined,
          (e: unknown) => e as CapgateError,
        );
        expect(error?.code, path).toBe("policy_denied");
        expect(error?.message, path).toContain(`with '${piece}' beside the`);
      }
      expect(await resolveInWorkspace(w, "data/config", { forWrite: true, allowMissing: true })).toBe(
        join(w, "data", "config"),
      );

      // A workspace whose root is a bare repository: no file tool writes anywhere in it.
      const bare = join(root, "bare");
      mkdirSync(join(bare, "objects"), { recursive: true });
      mkdirSync(join(bare, "refs"));
      writeFileSync(join(bare, "HEAD"), "ref: refs/heads/main\n");
      const error = await resolveInWorkspace(bare, "config", { forWrite: true, allowMissing: true }).then(
        () => undefined,
        (e: unknown) => e as CapgateError,
      );
      expect(error?.message).toMatch(/'\.', a git repository directory/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
