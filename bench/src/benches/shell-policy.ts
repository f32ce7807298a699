import { checkShellCommand } from "@capgate/shell-policy";
import type { Figure } from "../figure.js";
import { percentile } from "../lib/random.js";

export const name = "shell-policy";

/** Ordinary development commands: what the policy sees most of the time. */
const ORDINARY = [
  "git status",
  "git log --oneline -n 5",
  "npm test",
  "pnpm -r build",
  "grep -rn open src",
  "find . -name '*.ts' -exec grep -l foo {} +",
  "find . -name '*.o' -print0 | xargs -0 rm --",
  "env FOO=1 node x.js",
  "timeout 5 make test",
  "python3 -m pytest -q",
  "cd src && ls | wc -l",
  'for f in *.ts; do echo "$f"; done',
  "bash -c 'echo hi && ls -la'",
  "sudo -u nobody ls",
  "make test &> build.log",
];

/** Hostile forms: nested shells, wrappers, interpreters. */
const HOSTILE = [
  "env --chd=/tmp nohup timeout --sig=KILL 5 nice --adj=5 sudo -u x xdg-open https://example.com",
  `bash -c "eval \\"sh -c 'xdg-open https://example.com'\\""`,
  "python3 -W ignore -m cProfile -m webbrowser https://example.com",
  "su alice -c 'xdg-open https://example.com'",
  "echo x | xargs -I{} sh -c {}",
];

function measure(commands: readonly string[], rounds: number): Promise<number[]> {
  return (async () => {
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const command of commands) {
        const t0 = process.hrtime.bigint();
        await checkShellCommand(command);
        times.push(Number(process.hrtime.bigint() - t0) / 1e3);
      }
    }
    return times.sort((a, b) => a - b);
  })();
}

export async function run(): Promise<Figure[]> {
  const t0 = process.hrtime.bigint();
  await checkShellCommand("true");
  const firstMs = Number(process.hrtime.bigint() - t0) / 1e6;
  await measure(ORDINARY, 20); // warm-up
  const ordinary = await measure(ORDINARY, 100);
  const hostile = await measure(HOSTILE, 100);
  const round = (x: number) => Number(x.toFixed(1));
  return [
    { key: "shell-policy.first-check.ms", value: round(firstMs) },
    { key: "shell-policy.ordinary.p50.us", value: round(percentile(ordinary, 50)), target: "≤ 1000" },
    { key: "shell-policy.ordinary.p95.us", value: round(percentile(ordinary, 95)) },
    { key: "shell-policy.hostile.p50.us", value: round(percentile(hostile, 50)) },
    { key: "shell-policy.hostile.p95.us", value: round(percentile(hostile, 95)) },
  ];
}
