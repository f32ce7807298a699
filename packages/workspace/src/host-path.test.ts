import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hostPath, withHostPath } from "./host-path.js";

function scratch() {
  const root = mkdtempSync(join(tmpdir(), "capgate-hostpath-"));
  const ws = join(root, "ws");
  mkdirSync(join(ws, "node_modules", ".bin"), { recursive: true });
  mkdirSync(join(root, "tools", "bin"), { recursive: true });
  return { root, ws };
}

describe("hostPath: no PATH entry the model can write", () => {
  it("drops entries inside the workspace, by name or through a link, and relative or empty ones; keeps the rest in order", () => {
    const { root, ws } = scratch();
    symlinkSync(join(ws, "node_modules"), join(root, "linked"));
    const path = [
      join(ws, "node_modules", ".bin"),
      "/usr/local/bin",
      "",
      ".",
      "bin",
      join(ws, ".venv", "bin"), // not there yet: the model can create it
      join(root, "linked", ".bin"), // outside by name, inside by where it leads
      join(root, "tools", "bin"),
      join(ws, "..", "ws", "x"), // .. back into the workspace
      "/usr/bin",
    ].join(":");
    expect(hostPath(path, ws)).toBe(["/usr/local/bin", join(root, "tools", "bin"), "/usr/bin"].join(":"));
  });

  it("a workspace named through a link is compared by its real path too", () => {
    const { root, ws } = scratch();
    symlinkSync(ws, join(root, "ws-link"));
    expect(hostPath(`${join(ws, "node_modules", ".bin")}:/usr/bin`, join(root, "ws-link"))).toBe("/usr/bin");
  });

  it("withHostPath returns the same env when nothing is dropped, a copy with the safe PATH otherwise", () => {
    const { ws } = scratch();
    const clean = { PATH: "/usr/bin:/bin", HOME: "/h" };
    expect(withHostPath(clean, ws)).toBe(clean);
    const dirty = { PATH: `${ws}/node_modules/.bin:/usr/bin`, HOME: "/h" };
    expect(withHostPath(dirty, ws)).toEqual({ PATH: "/usr/bin", HOME: "/h" });
    expect(dirty.PATH).toBe(`${ws}/node_modules/.bin:/usr/bin`);
  });
});
