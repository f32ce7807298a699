#!/usr/bin/env node
const argv = process.argv.slice(2);
// `capgate hook …` runs on every Bash call of another agent: it skips commander and the
// rest of the CLI and loads only the shell policy.
if (argv[0] === "hook") {
  const { runHookCommand } = await import("./hook/entry.js");
  process.exitCode = await runHookCommand(argv.slice(1));
} else {
  // Ctrl-C, SIGTERM and SIGHUP end the CLI through process.exit, so exit hooks run: a
  // sandboxed command still running is stopped and its after-command steps happen (links
  // planted in .git removed, a repository assembled at the workspace root disabled).
  // Commands with a shutdown of their own (run, serve, worker, mcp serve) handle them.
  const ownShutdown =
    argv[0] === "run" ||
    argv[0] === "serve" ||
    argv[0] === "worker" ||
    (argv[0] === "mcp" && argv[1] === "serve");
  if (!ownShutdown) {
    for (const [signal, number] of [
      ["SIGINT", 2],
      ["SIGTERM", 15],
      ["SIGHUP", 1],
    ] as const) {
      process.on(signal, () => process.exit(128 + number));
    }
  }
  const { runCli } = await import("./index.js");
  process.exitCode = await runCli(argv);
}
