// The path guard's cost per call, with the hide list applied: a workspace that holds no
// home (the common case: the hidden paths are expanded and found outside) and one that IS
// the tool environment's HOME (every lookup also checked against ~/.ssh & co.) — median of
// N batches, in µs per call.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveInWorkspace, type WorkspaceScope } from "@capgate/workspace";
import type { Figure } from "../figure.js";

export const name = "path-guard";

const BATCHES = 15;
const PER_BATCH = 400;

export async function run(): Promise<Figure[]> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "capgate-bench-guard-")));
  const ws = join(base, "ws");
  mkdirSync(join(ws, "src"), { recursive: true });
  mkdirSync(join(ws, ".ssh"));
  writeFileSync(join(ws, "src", "a.ts"), "x");
  const plain: WorkspaceScope = { workspace: ws, env: { HOME: base }, stateDir: join(base, "state") };
  const home: WorkspaceScope = { workspace: ws, env: { HOME: ws }, stateDir: join(ws, "state") };
  const median = async (scope: WorkspaceScope) => {
    for (let i = 0; i < PER_BATCH; i++) await resolveInWorkspace(scope, "src/a.ts"); // warm
    const perCall: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const t = performance.now();
      for (let i = 0; i < PER_BATCH; i++) await resolveInWorkspace(scope, "src/a.ts");
      perCall.push(((performance.now() - t) / PER_BATCH) * 1000);
    }
    return Math.round([...perCall].sort((a, b) => a - b)[Math.floor(BATCHES / 2)] as number);
  };
  try {
    return [
      {
        key: "path_guard.resolve_us",
        value: await median(plain),
        target: "resolveInWorkspace, no hidden path inside",
      },
      {
        key: "path_guard.resolve_home_us",
        value: await median(home),
        target: "resolveInWorkspace, workspace = HOME",
      },
    ];
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
