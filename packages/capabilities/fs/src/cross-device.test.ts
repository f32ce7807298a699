import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/** A mount namespace of our own (a user namespace where needed), to put a tmpfs inside a workspace. */
const canMount =
  process.platform === "linux" &&
  spawnSync("unshare", ["-rm", "true"], { stdio: "ignore" }).status === 0 &&
  existsSync(new URL("../dist/index.js", import.meta.url));

/**
 * A workspace with a mount point inside (a volume mounted into a project): fs.move between
 * the two file systems gets EXDEV from rename. It used to copy then delete by name, which a
 * command swapping a directory for a link led outside — an outside review read ~/.ssh into
 * the workspace, wrote and overwrote files outside and deleted outside files that way. It
 * now refuses, saying why, and moves nothing.
 */
describe.runIf(canMount)("fs.move across file systems", () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "capgate-xdev-")));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it("is refused with a clear error, and nothing moves", () => {
    const ws = join(base, "ws");
    mkdirSync(join(ws, "mnt"), { recursive: true });
    const fsDist = pathToFileURL(new URL("../dist/index.js", import.meta.url).pathname).href;
    // The package's own dependency (pnpm links it into the package's node_modules).
    const toolsDist = pathToFileURL(
      realpathSync(new URL("../node_modules/@capgate/tools/dist/index.js", import.meta.url).pathname),
    ).href;
    const script = join(base, "move.mjs");
    writeFileSync(
      script,
      `import { existsSync, writeFileSync, mkdirSync } from "node:fs";
import { capability } from ${JSON.stringify(fsDist)};
import { CapabilitySet, createHostResources, DEFAULT_LIMITS, executeTool } from ${JSON.stringify(toolsDist)};
const ws = ${JSON.stringify(ws)};
writeFileSync(ws + "/mnt/f.txt", "on the mount");
mkdirSync(ws + "/mnt/dir");
writeFileSync(ws + "/mnt/dir/in.txt", "inside");
const ctx = { workspace: ws, signal: new AbortController().signal, env: { PATH: process.env.PATH },
  profile: { name: "Coder", maySpawnWorkers: false }, limits: { ...DEFAULT_LIMITS }, policy: {}, services: {},
  resources: createHostResources(), stateDir: ${JSON.stringify(join(base, "state"))}, capabilities: new CapabilitySet([capability]),
  loaded: { isToolLoaded: () => true } };
const out = [];
for (const [from, to] of [["mnt/f.txt", "f.txt"], ["mnt/dir", "dir"]]) {
  out.push(await executeTool("fs.move", { from, to }, ctx).then((r) => r, (e) => ({ error: e.code, message: e.message })));
}
out.push(Object.fromEntries(["mnt/f.txt", "mnt/dir/in.txt", "f.txt", "dir"].map((p) => [p, existsSync(ws + "/" + p)])));
process.stdout.write(JSON.stringify(out));`,
    );
    const run = spawnSync(
      "unshare",
      [
        "-rm",
        "sh",
        "-c",
        `mount -t tmpfs none "$1" && exec "$2" "$3"`,
        "sh",
        join(ws, "mnt"),
        process.execPath,
        script,
      ],
      { encoding: "utf8" },
    );
    expect(run.stderr).toBe("");
    const results = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    for (const result of results.slice(0, 2)) {
      const text = String(result.summary ?? result.message ?? "");
      expect(text).toContain(
        "are on different file systems (a mount point lies between them), and fs.move only renames within one; nothing was moved",
      );
    }
    // Inside the namespace: the sources are where they were, nothing arrived.
    expect(results[2]).toEqual({ "mnt/f.txt": true, "mnt/dir/in.txt": true, "f.txt": false, dir: false });
    // The tmpfs went away with the namespace; nothing reached the workspace's own file system.
    expect(existsSync(join(ws, "f.txt"))).toBe(false);
    expect(existsSync(join(ws, "dir"))).toBe(false);
  });
});
