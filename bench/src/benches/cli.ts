// SPEC §14.7 — CLI start: wall time of a `capgate` command ÷ `node -e 0`, medians in one run.
// cli.start_ratio: `capgate --version`; cli.hook_ratio: `capgate hook claude-code` on one
// Bash payload (it runs on every Bash call of Claude Code, target ≤ 3); cli.parse_ratio and
// cli.call_ratio: `capgate parse` and `capgate call fs.read` (one tool call with a fresh harness).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Figure } from "../figure.js";

export const name = "cli";

const BIN = fileURLToPath(new URL("../../../apps/cli/dist/bin.js", import.meta.url));

const HOOK_PAYLOAD = JSON.stringify({
  session_id: "bench",
  transcript_path: "/tmp/bench.jsonl",
  cwd: tmpdir(),
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "npm test && git status --short", description: "bench" },
  tool_use_id: "toolu_bench",
});

function wall(
  args: string[],
  options: { input?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, {
    stdio: [options.input === undefined ? "ignore" : "pipe", "ignore", "ignore"],
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}`);
  return performance.now() - t;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const round = (x: number) => Math.round(x * 100) / 100;

export async function run(): Promise<Figure[]> {
  if (!existsSync(BIN)) {
    console.log("cli: apps/cli is not built (pnpm build); not measured");
    return [];
  }
  const home = mkdtempSync(join(tmpdir(), "capgate-bench-cli-"));
  const workspace = join(home, "ws");
  spawnSync("mkdir", ["-p", workspace]);
  writeFileSync(join(workspace, "hello.txt"), "hello\n");
  const env = { ...process.env, CAPGATE_HOME: join(home, "state"), NO_COLOR: "1" };
  const commands: Record<string, () => number> = {
    start: () => wall([BIN, "--version"]),
    hook: () => wall([BIN, "hook", "claude-code"], { input: HOOK_PAYLOAD, cwd: workspace }),
    parse: () => wall([BIN, "parse", '{"name":"finish","arguments":{"summary":"done"}}']),
    call: () => wall([BIN, "call", "fs.read", '{"path":"hello.txt"}'], { cwd: workspace, env }),
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const bare: number[] = [];
  try {
    for (const f of Object.values(commands)) f();
    wall(["-e", "0"]);
    // Interleave so load changes hit all alike.
    for (let i = 0; i < 9; i++) {
      for (const [key, f] of Object.entries(commands)) times[key]?.push(f());
      bare.push(wall(["-e", "0"]));
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const base = median(bare);
  const ratio = (key: string) => round(median(times[key] ?? []) / base);
  return [
    { key: "cli.start_ratio", value: ratio("start"), target: "capgate --version ÷ node -e 0" },
    { key: "cli.hook_ratio", value: ratio("hook"), target: "≤ 2 (hook claude-code ÷ node -e 0)" },
    { key: "cli.parse_ratio", value: ratio("parse"), target: "capgate parse ÷ node -e 0" },
    { key: "cli.call_ratio", value: ratio("call"), target: "≤ 4 (capgate call fs.read ÷ node -e 0)" },
    { key: "cli.node_ms", value: Math.round(base), target: "node -e 0 median (ms), for scale" },
  ];
}
