import { readSync } from "node:fs";
import { resolve } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runClaudeCodeHook } from "@capgate/shell-policy/claude-code";

const USAGE =
  "usage: capgate hook claude-code [--config FILE]   (a Claude Code PreToolUse hook: JSON on stdin)";

/**
 * The payload, read whole from fd 0 — synchronously while that works: the hook has nothing
 * else to do meanwhile (the grammar compiles on V8's threads), and the stream `process.stdin`
 * builds costs ~5–10 ms of a ~100 ms hook (bench `cli.hook_ratio`). A stdin left
 * non-blocking by whoever started us answers EAGAIN instead of waiting: what was read so far
 * is kept and the rest is read as a stream, from where the reads stopped.
 */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for (;;) {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    let n: number;
    try {
      n = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EOF") break;
      if (code !== "EAGAIN") throw error;
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      break;
    }
    if (n === 0) break;
    chunks.push(buffer.subarray(0, n));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * `capgate hook …` without commander or the rest of the CLI: bin.ts comes here first, so
 * a hook that runs on every Bash call pays only for the shell policy. The decision is
 * `@capgate/shell-policy/claude-code`'s; this file parses the arguments and says how to start
 * `capgate sandbox-exec`.
 */
export async function runHookCommand(argv: string[]): Promise<number> {
  const [target, ...rest] = argv;
  let config: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === "--config" && rest[i + 1] !== undefined) config = rest[++i];
    else if (arg.startsWith("--config=")) config = arg.slice("--config=".length);
    else if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    } else {
      process.stderr.write(`error: unknown argument '${arg}'\nhint: ${USAGE}\n`);
      return 2;
    }
  }
  if (target === "--help" || target === "-h" || target === undefined) {
    (target ? process.stdout : process.stderr).write(`${USAGE}\n`);
    return target ? 0 : 2;
  }
  if (target !== "claude-code") {
    const hint = target.toLowerCase().startsWith("cl") ? "did you mean 'claude-code'?" : USAGE;
    process.stderr.write(`error: no hook named '${target}'\nhint: ${hint}\n`);
    return 2;
  }
  // One short-lived check: the shell grammar's WebAssembly runs on V8's baseline compiler
  // only. Optimising it (TurboFan tier-up) costs background work that the process then
  // waits for at exit — on a busy machine most of the hook's wall time. And it is compiled
  // whole, up front: the policy starts that compile on V8's background threads before it
  // reads its own code, so the two overlap; compiled lazily, the grammar's functions would
  // compile one by one on this thread during the first parse.
  setFlagsFromString("--liftoff-only");
  setFlagsFromString("--no-wasm-lazy-compilation");
  // With "hook": { "sandbox": true }, the call is rewritten to run through this same program.
  const bin = process.argv[1] ? resolve(process.argv[1]) : "capgate";
  const sandboxExec = [process.execPath, bin, "sandbox-exec"];
  return runClaudeCodeHook(
    { ...(config ? { config } : {}), sandboxExec },
    {
      stdin: readStdin,
      out: (t) => process.stdout.write(`${t}\n`),
      err: (t) => process.stderr.write(`${t}\n`),
      cwd: process.cwd(),
    },
  );
}
