#!/usr/bin/env node
const argv = process.argv.slice(2);
// `capgate hook …` runs on every Bash call of another agent: it skips commander and the
// rest of the CLI and loads only the shell policy.
if (argv[0] === "hook") {
  const { runHookCommand } = await import("./hook/entry.js");
  process.exitCode = await runHookCommand(argv.slice(1));
} else {
  // Ctrl-C, Ctrl-\, SIGTERM, SIGHUP (but see reloadsOnHup) and every other signal a process can catch end the
  // CLI through process.exit, so exit hooks run: a
  // sandboxed command still running is stopped and its after-command steps happen (links
  // planted in .git removed, a repository assembled at the workspace root disabled).
  // Commands with a shutdown of their own (run, serve, worker, eval, mcp serve) handle SIGINT and
  // SIGTERM themselves.
  // The command word comes after any global options (`capgate --config f run …`).
  let at = 0;
  while (at < argv.length && argv[at]!.startsWith("-"))
    at += argv[at] === "--config" || argv[at] === "--capability" ? 2 : 1;
  const [command, sub] = [argv[at], argv[at + 1]];
  const ownShutdown =
    command === "run" ||
    command === "serve" ||
    command === "worker" ||
    command === "eval" ||
    (command === "mcp" && sub === "serve");
  // The long-running servers reload their config on SIGHUP (as daemons do) instead of ending;
  // until a server listens for it, one that arrives early is ignored: the file is being read anyway.
  const reloadsOnHup = command === "serve" || (command === "mcp" && sub === "serve");
  // Every signal whose default is to end the process and that a process can catch (the
  // user's Ctrl-\ is SIGQUIT). SIGKILL cannot be caught: docs/security.md §6.
  for (const [signal, number] of [
    ["SIGHUP", 1],
    ["SIGINT", 2],
    ["SIGQUIT", 3],
    ["SIGTRAP", 5],
    ["SIGUSR1", 10],
    ["SIGUSR2", 12],
    ["SIGALRM", 14],
    ["SIGTERM", 15],
    ["SIGXCPU", 24],
    ["SIGXFSZ", 25],
    ["SIGVTALRM", 26],
    ["SIGPROF", 27],
    ["SIGPOLL", 29],
    ["SIGPWR", 30],
  ] as const) {
    // Commands with a shutdown of their own keep SIGINT and SIGTERM.
    if (ownShutdown && (signal === "SIGINT" || signal === "SIGTERM")) continue;
    if (reloadsOnHup && signal === "SIGHUP") {
      process.on(signal, () => undefined);
      continue;
    }
    process.on(signal, () => process.exit(128 + number));
  }
  if (argv[0] === "sandbox-exec") {
    // Runs before every sandboxed Bash call of the Claude Code hook: no commander, no harness.
    const { runSandboxExec } = await import("./sandbox-exec/sandbox-exec.js");
    process.exitCode = await runSandboxExec(argv.slice(1));
  } else {
    const { runCli } = await import("./index.js");
    process.exitCode = await runCli(argv);
  }
}
