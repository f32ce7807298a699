import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import { afterEach, describe, expect, it } from "vitest";
import { describeStripped, stripNestedRepositories } from "./nested.js";

const gitPart = needs(["git"]);

const roots: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function tree(): { root: string; outside: string } {
  const base = mkdtempSync(join(tmpdir(), "capgate-strip-"));
  roots.push(base);
  const root = join(base, "tree");
  const outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  return { root, outside };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    stdio: "pipe",
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", HOME: "/nonexistent" },
  });

describe.skipIf(gitPart.skip)(`stripNestedRepositories${gitPart.note}`, () => {
  it("removes every .git below the root — directory, gitdir file, link, any case, any depth — and leaves the root's own and the files", async () => {
    const { root, outside } = tree();
    git(root, "init", "-q");
    for (const dir of ["a", "b/c/d", "e", "f", "g"]) mkdirSync(join(root, dir), { recursive: true });
    git(join(root, "a"), "init", "-q");
    git(join(root, "b/c/d"), "init", "-q");
    writeFileSync(join(root, "e", ".git"), `gitdir: ${outside}\n`);
    symlinkSync(outside, join(root, "f", ".git"));
    mkdirSync(join(root, "g", ".GiT"));
    for (const dir of ["a", "b/c/d", "e", "f", "g"]) writeFileSync(join(root, dir, "file"), "kept\n");
    const stripped = await stripNestedRepositories(root);
    expect(stripped).toEqual([
      { path: "a/.git", kind: "repository" },
      { path: "b/c/d/.git", kind: "repository" },
      { path: "e/.git", kind: "gitdir_file" },
      { path: "f/.git", kind: "gitdir_link" },
      { path: "g/.GiT", kind: "repository" },
    ]);
    for (const dir of ["a", "b/c/d", "e", "f", "g"]) {
      expect(readdirSync(join(root, dir))).toEqual(["file"]);
    }
    expect(lstatSync(join(root, ".git", "HEAD")).isFile()).toBe(true);
    // What the link pointed at is untouched.
    expect(existsSync(outside)).toBe(true);
  });

  it("never follows a link: a linked directory holding a repository outside the tree is left alone", async () => {
    const { root, outside } = tree();
    git(outside, "init", "-q");
    symlinkSync(outside, join(root, "linked"));
    expect(await stripNestedRepositories(root)).toEqual([]);
    expect(existsSync(join(outside, ".git", "HEAD"))).toBe(true);
  });

  it("breaks a directory git would take for a bare repository (HEAD with objects and refs) by removing its HEAD", async () => {
    const { root } = tree();
    git(root, "init", "-q", "--bare", "vendor/embedded");
    mkdirSync(join(root, "looks-like"));
    writeFileSync(join(root, "looks-like", "HEAD"), "not a repository without objects and refs\n");
    expect(await stripNestedRepositories(root)).toEqual([
      { path: "vendor/embedded/HEAD", kind: "bare_repository" },
    ]);
    expect(existsSync(join(root, "vendor", "embedded", "config"))).toBe(true);
    expect(existsSync(join(root, "vendor", "embedded", "HEAD"))).toBe(false);
    expect(existsSync(join(root, "looks-like", "HEAD"))).toBe(true);
  });

  it("removes FIFOs and sockets (git cannot record them; a FIFO .gitignore blocks git)", async () => {
    const { root } = tree();
    mkdirSync(join(root, "docs"));
    execFileSync("mkfifo", [join(root, "docs", ".gitignore")]);
    const server = createServer();
    servers.push(server);
    await new Promise<void>((r) => server.listen(join(root, "sock"), r));
    expect(await stripNestedRepositories(root)).toEqual([
      { path: "docs/.gitignore", kind: "special_file" },
      { path: "sock", kind: "special_file" },
    ]);
    expect(readdirSync(join(root, "docs"))).toEqual([]);
  });

  it("refuses a tree larger than its limit, before staging anything", async () => {
    const { root } = tree();
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `f${i}`), "");
    await expect(stripNestedRepositories(root, { maxEntries: 10 })).rejects.toThrow(/more than 10 entries/);
  });

  it("describes what it removed in one sentence", () => {
    expect(describeStripped([])).toBeUndefined();
    expect(
      describeStripped([
        { path: "sub/.git", kind: "repository" },
        { path: "planted", kind: "gitlink" },
        { path: "p", kind: "special_file" },
      ]),
    ).toBe(
      "Before publishing, capgate removed nested git repositories ('sub/.git': git would have entered them and run what their config names, and recorded a gitlink instead of their files); gitlinks, i.e. submodule entries ('planted': left out of the commit); pipes, sockets or devices ('p': git cannot record them, and a pipe blocks it).",
    );
  });
});
