import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NotRegularFileError, openRegularFile } from "./regular-file.js";

const dir = mkdtempSync(join(tmpdir(), "capgate-regular-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("openRegularFile", () => {
  it("opens a regular file and reads from the handle", async () => {
    writeFileSync(join(dir, "a.txt"), "abc");
    const { handle, stats } = await openRegularFile(join(dir, "a.txt"));
    try {
      expect(stats.size).toBe(3);
      expect((await handle.readFile()).toString()).toBe("abc");
    } finally {
      await handle.close();
    }
  });

  it.each([
    ["/dev/null", "character-device", /is a character device, not a regular file/],
    ["/dev/zero", "character-device", /character device/],
    [dir, "directory", /is a directory, not a regular file/],
  ])("refuses %s (%s)", async (path, type, message) => {
    const error = await openRegularFile(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotRegularFileError);
    expect(error).toMatchObject({ code: "not_a_regular_file", fileType: type, property: "path" });
    expect((error as Error).message).toMatch(message);
  });

  it("refuses a FIFO without a writer at once, and a symlink (never followed)", async () => {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => openRegularFile(fifo, { shown: "fifo" }).catch((e: Error) => e)),
    );
    for (const r of results) expect(r).toMatchObject({ code: "not_a_regular_file", fileType: "fifo" });
    symlinkSync(join(dir, "a.txt"), join(dir, "link"));
    await expect(openRegularFile(join(dir, "link"))).rejects.toMatchObject({ fileType: "symlink" });
  });
});
