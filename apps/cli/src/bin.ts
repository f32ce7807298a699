#!/usr/bin/env node
const argv = process.argv.slice(2);
// `capgate hook …` runs on every Bash call of another agent: it skips commander and the
// rest of the CLI and loads only the shell policy.
if (argv[0] === "hook") {
  const { runHookCommand } = await import("./hook/entry.js");
  process.exitCode = await runHookCommand(argv.slice(1));
} else {
  const { runCli } = await import("./index.js");
  process.exitCode = await runCli(argv);
}
