// The OS sandbox's start overhead: `true` under bash alone, in the sandbox without network,
// in a workspace holding a git repository (every protected .git entry a mount point or a
// placeholder), and in the guarded sandbox (socat bridge to the host proxy) — median of N, in ms.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeEgressProxies, runProcess, sandboxCommand, systemBash } from "@capgate/sandbox";
import type { ShellNetwork } from "@capgate/tools";
import type { Figure } from "../figure.js";

export const name = "sandbox";

const N = 30;

export async function run(): Promise<Figure[]> {
  const ws = mkdtempSync(join(tmpdir(), "capgate-bench-sandbox-"));
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const argv = [systemBash(), "--noprofile", "--norc", "-c", "true"];
  const plain = async () => {
    await runProcess({ file: argv[0] as string, args: argv.slice(1), cwd: ws, env });
  };
  const repo = join(ws, "repo");
  mkdirSync(repo);
  execFileSync("git", ["init", "-q", repo]);
  const sandboxed =
    (network: ShellNetwork, workspace = ws) =>
    async () => {
      const w = await sandboxCommand(argv, { workspace, cwd: workspace, env, shell: { network } });
      try {
        await runProcess({ file: w.file, args: w.args, cwd: ws, env: w.env });
      } finally {
        w.release();
      }
    };
  const median = async (f: () => Promise<void>) => {
    await f(); // warm: the probe, the proxy, the page cache
    const times: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await f();
      times.push(performance.now() - t);
    }
    return Math.round(([...times].sort((a, b) => a - b)[Math.floor(N / 2)] as number) * 10) / 10;
  };
  try {
    return [
      { key: "sandbox.bash_ms", value: await median(plain), target: "`true` under bash, no sandbox" },
      { key: "sandbox.none_ms", value: await median(sandboxed("none")), target: "bubblewrap, network none" },
      {
        key: "sandbox.repo_none_ms",
        value: await median(sandboxed("none", repo)),
        target: "bubblewrap, network none, workspace with a git repository",
      },
      {
        key: "sandbox.guarded_ms",
        value: await median(sandboxed("guarded")),
        target: "bubblewrap + proxy bridge",
      },
    ];
  } finally {
    await closeEgressProxies();
    rmSync(ws, { recursive: true, force: true });
  }
}
