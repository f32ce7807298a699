// A bind mount shows a directory under a second name; the placement check asks the mount
// table where a path really lives. Unit cases on a written table, then real bind mounts in a
// private mount namespace (root only; skipped where `unshare --mount` is not allowed).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mountSource, mountsBelow, readMountTable, sourceWithin, topMounts } from "./mount-source.js";

const TABLE = [
  "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
  "40 26 0:30 / /tmp rw - tmpfs tmpfs rw",
  "65 26 254:0 /home/u/proj/.state /root/.capgate rw,relatime - ext4 /dev/vda rw",
  "66 26 254:0 /home/u/proj /ws rw,relatime - ext4 /dev/vda rw",
  "67 26 254:0 /srv/a\\040b /mnt/ab rw - ext4 /dev/vda rw",
].join("\n");

describe("mountSource", () => {
  const table = readMountTable(TABLE)!;
  it("names a path by its file system and inner path, through the closest mount", () => {
    expect(mountSource("/home/u/proj/x", table)).toEqual({ device: "254:0", inner: "/home/u/proj/x" });
    expect(mountSource("/root/.capgate/runs", table)).toEqual({
      device: "254:0",
      inner: "/home/u/proj/.state/runs",
    });
    expect(mountSource("/ws", table)).toEqual({ device: "254:0", inner: "/home/u/proj" });
    expect(mountSource("/tmp/x", table)).toEqual({ device: "0:30", inner: "/x" });
    expect(mountSource("/mnt/ab/c", table)).toEqual({ device: "254:0", inner: "/srv/a b/c" });
  });

  it("of two mounts on one point, the one on top wins, whatever the table's order (a mount moved over another keeps its older id)", () => {
    const stacked = readMountTable(
      [
        "26 1 254:0 / / rw - ext4 /dev/vda rw",
        "65 66 254:0 /ws/.st /mnt rw - ext4 /dev/vda rw",
        "66 26 0:39 / /mnt rw - tmpfs tmpfs rw",
      ].join("\n"),
    )!;
    expect(topMounts(stacked).find((m) => m.mountPoint === "/mnt")?.id).toBe("65");
    expect(mountSource("/mnt/x", stacked)).toEqual({ device: "254:0", inner: "/ws/.st/x" });
    expect(mountsBelow("/", stacked)).toEqual([
      { at: "/mnt", source: { device: "254:0", inner: "/ws/.st" } },
    ]);
  });

  it("two names of one directory have one source; another file system never lies within", () => {
    const ws = mountSource("/ws", table)!;
    expect(sourceWithin(ws, mountSource("/root/.capgate", table)!)).toBe(true);
    expect(sourceWithin(ws, mountSource("/home/u/projects", table)!)).toBe(false);
    expect(sourceWithin(ws, mountSource("/tmp/home/u/proj", table)!)).toBe(false);
  });
});

const root = realpathSync(mkdtempSync(join(tmpdir(), "capgate-mounts-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const canMount =
  process.platform === "linux" &&
  spawnSync("unshare", ["--mount", "--propagation", "private", "true"], { stdio: "ignore" }).status === 0;
const DIST = new URL("../dist/index.js", import.meta.url).pathname;

/** The placement problem of `state` beside `ws` as seen after `mounts` (bind source → target), in a private mount namespace. */
function placementAfter(mounts: Array<[string, string]>, ws: string, state: string): string {
  const script = [
    ...mounts.map(([from, to]) => `mount --bind '${from}' '${to}'`),
    `exec node --input-type=module -e 'import { stateDirPlacementProblem } from "${DIST}"; console.log(String(stateDirPlacementProblem(process.argv[1], process.argv[2])))' '${ws}' '${state}'`,
  ].join(" && ");
  return execFileSync("unshare", ["--mount", "--propagation", "private", "sh", "-c", script], {
    encoding: "utf8",
  }).trim();
}

describe.skipIf(!canMount)("stateDirPlacementProblem with real bind mounts", () => {
  it("refuses a state directory, or an entry of it, that is a workspace folder mounted elsewhere (a container's volume)", () => {
    const ws = join(root, "ws1");
    const state = join(root, "state1");
    mkdirSync(join(ws, "st"), { recursive: true });
    mkdirSync(state);
    expect(placementAfter([[join(ws, "st"), state]], ws, state)).toMatch(
      /under another name \(a bind mount\)/,
    );
    const state2 = join(root, "state2");
    mkdirSync(join(state2, "sandboxes"), { recursive: true });
    mkdirSync(join(ws, "j"));
    expect(placementAfter([[join(ws, "j"), join(state2, "sandboxes")]], ws, state2)).toBe(
      "has its 'sandboxes' entry in the workspace under another name (a bind mount)",
    );
  });

  it("refuses the state directory, an entry or a directory above them mounted inside the workspace; accepts a volume at the state directory's own path", () => {
    const ws = join(root, "ws5");
    const state = join(root, "state5");
    mkdirSync(join(ws, "x"), { recursive: true });
    mkdirSync(join(state, "mcp-auth"), { recursive: true });
    const x = join(ws, "x");
    expect(placementAfter([[state, x]], ws, state)).toBe(
      `shows itself in the workspace at '${x}' (a mount), which the hide list cannot hide`,
    );
    expect(placementAfter([[join(state, "mcp-auth"), x]], ws, state)).toMatch(/shows its 'mcp-auth' entry/);
    expect(placementAfter([[root, x]], ws, state)).toMatch(/shows itself in the workspace/);
    // The state directory inside the workspace by path: a second name inside it is refused,
    // a volume mounted at its own path is hidden with it.
    const inside = join(ws, ".capgate");
    const volume = join(root, "volume5");
    mkdirSync(inside);
    mkdirSync(volume);
    mkdirSync(join(ws, "alias"));
    expect(placementAfter([[inside, join(ws, "alias")]], ws, inside)).toMatch(
      /shows itself in the workspace at/,
    );
    expect(placementAfter([[volume, inside]], ws, inside)).toBe("undefined");
  });

  it("names a workspace that is the state directory under another name as such", () => {
    const ws = join(root, "ws6");
    const state = join(root, "state6");
    mkdirSync(ws);
    mkdirSync(state);
    expect(placementAfter([[state, ws]], ws, state)).toBe(
      "is the workspace under another name (a bind mount)",
    );
  });

  it("refuses a workspace that is a state directory's entry mounted elsewhere; accepts a plain bind of an unrelated folder", () => {
    const state = join(root, "state3");
    mkdirSync(join(state, "runs", "x"), { recursive: true });
    const alias = join(root, "alias3");
    mkdirSync(alias);
    expect(placementAfter([[join(state, "runs", "x"), alias]], alias, state)).toMatch(
      /holds the workspace in its 'runs' entry/,
    );
    const project = join(root, "proj4");
    const mountedWs = join(root, "ws4");
    mkdirSync(project);
    mkdirSync(mountedWs);
    const state4 = join(root, "state4");
    mkdirSync(state4);
    expect(placementAfter([[project, mountedWs]], mountedWs, state4)).toBe("undefined");
  });
});
