// The opened-file check: a path whose directory was swapped for a link between the guard's
// check and the open lands on another file; the handle is refused, whatever the path did.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openedFileRefusal } from "./opened-file.js";
import { openRegularFile } from "./regular-file.js";

let base: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "capgate-opened-")));
  mkdirSync(join(base, "real"));
  writeFileSync(join(base, "real", "f.txt"), "inside\n");
  mkdirSync(join(base, "outside"));
  writeFileSync(join(base, "outside", "f.txt"), "SECRET\n");
  // What a swap leaves at the moment of the open: the checked name now goes through a link.
  symlinkSync(join(base, "outside"), join(base, "swapped"));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe.runIf(process.platform === "linux")("a guarded open is the file the guard approved", () => {
  it("the file at the approved real path opens", async () => {
    const { handle } = await openRegularFile(join(base, "real", "f.txt"), { guarded: true });
    expect(await handle.readFile("utf8")).toBe("inside\n");
    await handle.close();
  });

  it("an open that landed elsewhere through a linked directory is refused, and nothing is read", async () => {
    const e = await openRegularFile(join(base, "swapped", "f.txt"), { guarded: true, shown: "d/f.txt" }).then(
      () => undefined,
      (error: unknown) => error as { code?: string; message?: string },
    );
    expect(e?.code).toBe("policy_denied");
    expect(e?.message).toMatch(/^d\/f\.txt was not read: a directory on its path changed/);
    expect(e?.message).not.toContain("outside");
    // Unguarded (a caller that did not run the guard) opens as before.
    const { handle } = await openRegularFile(join(base, "swapped", "f.txt"));
    await handle.close();
  });

  it("openedFileRefusal says nothing for the expected file and why for any other", async () => {
    const { handle } = await openRegularFile(join(base, "swapped", "f.txt"));
    try {
      expect(openedFileRefusal(handle.fd, join(base, "outside", "f.txt"))).toBeUndefined();
      expect(openedFileRefusal(handle.fd, join(base, "swapped", "f.txt"))).toMatch(/changed/);
    } finally {
      await handle.close();
    }
    expect(readdirSync(join(base, "outside"))).toEqual(["f.txt"]);
  });
});
