import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  MAX_REMOVE_DEPTH,
  makeDirectories,
  RemoveStoppedError,
  readDirectory,
  removeEntry,
  renameEntry,
  withPinnedDirectory,
} from "./pinned-dir.js";

/**
 * The guard approves a real path; then something swaps a directory on it for a link (a
 * background shell can). These tests make the swap before the call, which is the state a
 * racing swapper leaves at the worst moment; fs's race test runs a real swapper.
 */
describe.runIf(process.platform === "linux")("directories held open while they change", () => {
  let base: string;
  let ws: string;
  let outside: string;
  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), "capgate-pinned-")));
    ws = join(base, "ws");
    outside = join(base, "outside");
    mkdirSync(ws);
    mkdirSync(outside);
    writeFileSync(join(outside, "victim"), "keep me");
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it("opening a directory whose path now leads through a link is refused", async () => {
    symlinkSync(outside, join(ws, "d"));
    // The guard approved ws/d when it was a directory.
    await expect(withPinnedDirectory(join(ws, "d"), async () => "opened")).rejects.toThrow(
      /changed while it was being worked on/,
    );
  });

  it("unlink through the held parent removes the entry of that directory only", async () => {
    mkdirSync(join(ws, "d"));
    writeFileSync(join(ws, "d", "victim"), "x");
    await withPinnedDirectory(join(ws, "d"), async (dir) => {
      // Swapped after the open: the descriptor still names the original directory.
      renameSync(join(ws, "d"), join(ws, "d.moved"));
      symlinkSync(outside, join(ws, "d"));
      await removeEntry(dir, "victim");
    });
    expect(readdirSync(join(ws, "d.moved"))).toEqual([]);
    expect(readdirSync(outside)).toEqual(["victim"]);
  });

  it("a tree with a directory swapped for a link: the walk removes the link, never what it points to", async () => {
    mkdirSync(join(ws, "tree", "sub"), { recursive: true });
    writeFileSync(join(ws, "tree", "sub", "a"), "a");
    rmSync(join(ws, "tree", "sub"), { recursive: true });
    symlinkSync(outside, join(ws, "tree", "sub"));
    const removed = await withPinnedDirectory(ws, (dir) => removeEntry(dir, "tree"));
    expect(removed.inside).toBe(1);
    expect(existsSync(join(ws, "tree"))).toBe(false);
    expect(readdirSync(outside)).toEqual(["victim"]);
  });

  it("the walk's check can stop it, and counts what was inside", async () => {
    mkdirSync(join(ws, "tree", "a", "b"), { recursive: true });
    writeFileSync(join(ws, "tree", "a", "b", "f"), "f");
    writeFileSync(join(ws, "tree", "g"), "g");
    const seen: string[] = [];
    const removed = await withPinnedDirectory(ws, (dir) =>
      removeEntry(dir, "tree", (rel) => {
        seen.push(rel);
      }),
    );
    expect(removed.inside).toBe(4);
    expect(seen.sort()).toEqual(["tree/a", "tree/a/b", "tree/a/b/f", "tree/g"]);
    mkdirSync(join(ws, "keep"));
    writeFileSync(join(ws, "keep", "stop-here"), "x");
    await expect(
      withPinnedDirectory(ws, (dir) =>
        removeEntry(dir, "keep", (rel) => {
          if (rel.endsWith("stop-here")) throw new Error(`refused ${rel}`);
        }),
      ),
    ).rejects.toThrow("refused keep/stop-here");
    expect(existsSync(join(ws, "keep", "stop-here"))).toBe(true);
  });

  it("mkdir -p never follows a link put on the way, and says what changed", async () => {
    symlinkSync(outside, join(ws, "a"));
    // The guard saw ws/a missing (it would create it); a link appeared there since.
    await expect(makeDirectories(ws, join(ws, "a", "b", "c"))).rejects.toThrow(
      /changed while it was being worked on/,
    );
    expect(readdirSync(outside)).toEqual(["victim"]);
    const made = await makeDirectories(ws, join(ws, "x", "y"));
    await made.dir.close();
    expect(made.created).toBe(true);
    expect(existsSync(join(ws, "x", "y"))).toBe(true);
    const again = await makeDirectories(ws, join(ws, "x", "y"));
    await again.dir.close();
    expect(again.created).toBe(false);
    // A name that merely starts with two dots is inside.
    const dotted = await makeDirectories(ws, join(ws, "..cache", "z"));
    await dotted.dir.close();
    expect(existsSync(join(ws, "..cache", "z"))).toBe(true);
    await expect(makeDirectories(ws, base)).rejects.toThrow("is not inside");
  });

  it("rename between two held directories lands in them, whatever the paths became", async () => {
    mkdirSync(join(ws, "from"));
    mkdirSync(join(ws, "to"));
    writeFileSync(join(ws, "from", "f"), "moved");
    await withPinnedDirectory(join(ws, "from"), (from) =>
      withPinnedDirectory(join(ws, "to"), async (to) => {
        renameSync(join(ws, "to"), join(ws, "to.moved"));
        symlinkSync(outside, join(ws, "to"));
        await renameEntry(from, "f", to, "f");
      }),
    );
    expect(readdirSync(join(ws, "to.moved"))).toEqual(["f"]);
    expect(readdirSync(outside)).toEqual(["victim"]);
  });

  it("a listing is of the directory approved, or none: one swapped for a link is not read", async () => {
    mkdirSync(join(ws, "d"));
    writeFileSync(join(ws, "d", "mine"), "x");
    expect((await readDirectory(join(ws, "d")))?.map((e) => e.name)).toEqual(["mine"]);
    rmSync(join(ws, "d"), { recursive: true });
    symlinkSync(outside, join(ws, "d"));
    expect(await readDirectory(join(ws, "d"))).toBeNull();
  });

  it("a removal that cannot go on says where it stopped, why, and how much was removed, in the caller's names", async () => {
    let dir = join(ws, "deep");
    mkdirSync(dir);
    writeFileSync(join(dir, "first"), "x");
    for (let i = 0; i <= MAX_REMOVE_DEPTH; i++) {
      dir = join(dir, "d");
      mkdirSync(dir);
    }
    const error = await withPinnedDirectory(ws, (parent) =>
      removeEntry(parent, "deep", undefined, "work/deep"),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RemoveStoppedError);
    const stopped = error as RemoveStoppedError;
    expect(stopped.at).toBe(`work/deep${"/d".repeat(MAX_REMOVE_DEPTH)}`);
    expect(stopped.message).toContain(`nested more than ${MAX_REMOVE_DEPTH} directories deep`);
    expect(stopped.message).not.toContain("/proc/self/fd");
  });
});
