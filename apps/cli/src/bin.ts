#!/usr/bin/env node
const argv = process.argv.slice(2);
// `capgate hook …` runs on every Bash call of another agent: it skips commander and the
// rest of the CLI and loads only the shell policy.
if (argv[0] === "hook") {
  const { runHookCommand } = await import("./hook/entry.js");
  process.exitCode = await runHookCommand(argv.slice(1));
} else {
  // Every catchable fatal signal ends the CLI through process.exit, so exit hooks run: a
  // sandboxed command still running is stopped and its after-command steps happen
  // (docs/security.md §6). The command word comes after any global options.
  let at = 0;
  while (at < argv.length && argv[at]!.startsWith("-"))
    at += argv[at] === "--config" || argv[at] === "--capability" ? 2 : 1;
  const [command, sub] = [argv[at], argv[at + 1]];
  const server = command === "serve" || (command === "mcp" && sub === "serve");
  const { exitOnSignals } = await import("@capgate/process-group");
  exitOnSignals({
    // Commands with a shutdown of their own handle SIGINT and SIGTERM themselves.
    own:
      server || command === "run" || command === "worker" || command === "eval" ? ["SIGINT", "SIGTERM"] : [],
    // The servers reload their config on SIGHUP; one arriving before they listen is ignored.
    ignore: server ? ["SIGHUP"] : [],
  });
  if (argv[0] === "sandbox-exec") {
    // Runs before every sandboxed Bash call of the Claude Code hook: no commander, no harness.
    const { runSandboxExec } = await import("./sandbox-exec/sandbox-exec.js");
    process.exitCode = await runSandboxExec(argv.slice(1));
  } else {
    const { runCli } = await import("./index.js");
    process.exitCode = await runCli(argv);
  }
}
