import { APPROVAL_MODES } from "@capgate/tools";
import { Command, Option } from "commander";
import type { GlobalOptions } from "./context.js";

import type { CliIO } from "./io.js";
import { VERSION } from "./version.js";

/**
 * The `capgate` command tree. Parsing and rendering only: every command's work is in a
 * package, loaded when the command runs (so `capgate --version` stays fast).
 */
export function buildProgram(io: CliIO, setExit: (code: number) => void): Command {
  const program = rootCommand(io);
  const act = actions(program, io, setExit);
  addRunCommands(program, act);
  addCatalogCommands(program, act);
  addMcpCommands(program, act);
  addServiceCommands(program, act);
  return program;
}

/** `capgate` itself: its global options, and usage errors left to runCli. */
function rootCommand(io: CliIO): Command {
  return (
    new Command("capgate")
      .description(
        "A capability-gated agent harness: eight tools visible, every concrete tool behind search → load → call.",
      )
      .version(VERSION, "-v, --version")
      .option("--config <file>", "config file (default: ./capgate.config.json)")
      .option("--debug", "print stack traces on errors")
      .option(
        "--capability <pkg-or-path>",
        "load a capability plugin (repeatable; package name or path)",
        (value: string, previous: string[] = []) => [...previous, value],
      )
      // Usage errors are reported by runCli (one line plus a hint), not by commander.
      .configureOutput({
        writeOut: (s) => io.out(s.trimEnd()),
        writeErr: (s) => io.err(s.trimEnd()),
        outputError: () => undefined,
      })
      .exitOverride()
  );
}

/**
 * Command actions that load their function when the command runs: `run` hands it the
 * global options too, `local` only its own arguments and the IO.
 */
function actions(program: Command, io: CliIO, setExit: (code: number) => void) {
  const global = (options: unknown): GlobalOptions => ({
    ...program.opts<GlobalOptions>(),
    json: (options as { json?: boolean } | undefined)?.json === true,
  });
  // commander passes (args…, options, command). Drop the command object, and merge the
  // options of every ancestor: `capabilities show fs --json` must see --json even though
  // the parent `capabilities` declares it too (commander gives it to the parent).
  const strip =
    <A extends unknown[]>(f: (...args: A) => Promise<void>) =>
    async (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      const rest = args.slice(0, -1);
      rest[rest.length - 1] = { ...command.optsWithGlobals(), ...(rest.at(-1) as object) };
      return f(...(rest as A));
    };
  return {
    setExit,
    run: <A extends unknown[]>(
      load: () => Promise<(...args: [...A, GlobalOptions, CliIO]) => Promise<number>>,
    ) =>
      strip(async (...args: A) => {
        const fn = await load();
        setExit(await fn(...args, global(args.at(-1)), io));
      }),
    local: <A extends unknown[]>(load: () => Promise<(...args: [...A, CliIO]) => Promise<number>>) =>
      strip(async (...args: A) => {
        const fn = await load();
        setExit(await fn(...args, io));
      }),
  };
}

type Actions = ReturnType<typeof actions>;

/** `--approval <mode>`, one of the approval modes. */
const approvalOption = (description: string) =>
  new Option("--approval <mode>", description).choices(APPROVAL_MODES);

/** Goal runs, chat, evaluations and the demo. */
function addRunCommands(program: Command, act: Actions): void {
  program
    .command("run")
    .description("run the goal loop on a goal")
    .argument("<goal>", "what to achieve")
    .option("--profile <name>", "profile (default: inferred from the goal)")
    .option("--model <spec>", "openai:<model>, anthropic:<model> or scripted:<file>")
    .option("--workspace <dir>", "workspace root (default: current directory)")
    .option("--max-steps <n>", "step limit")
    .option("--mcp", "let calls fall through to the configured MCP servers")
    .addOption(approvalOption("ask before tools run"))
    .option("--json", "print events as JSON lines")
    .action(act.run(async () => (await import("./commands/run.js")).runCommand));

  program
    .command("chat")
    .description("interactive chat loop (/profile NAME, /tools, /exit)")
    .option("--model <spec>", "model spec")
    .option("--profile <name>", "starting profile (default Orchestrator)")
    .option("--workspace <dir>", "workspace root")
    .addOption(approvalOption("ask before tools run"))
    .option("--quiet", "show only the answers")
    .option("--json", "print events and replies as JSON lines")
    .action(act.run(async () => (await import("./commands/chat.js")).chatCommand));

  program
    .command("eval")
    .description("measure a model on a task suite: the gate vs every tool exposed (vs code mode)")
    .option("--model <spec>", "the model to evaluate (any spec; scripted:<dir> for per-task scripts)")
    .option("--suite <dir>", "task suite directory (default: the starter suite)")
    .option("--tasks <ids>", "comma-separated task ids (default: all)")
    .option("--mode <modes>", "comma-separated: gate, exposed, code (default: all available)")
    .option("--repeat <n>", "runs per task and mode (default 1)")
    .option("--concurrency <n>", "runs at once (default 1)")
    .option("--distractors <k>", "add K extra MCP servers of one real public tool each (default 0)")
    .option("--out <dir>", "results.json, report.md, report.html and traces; resumed if it holds results")
    .option("--keep-workspaces", "keep each run's temporary workspace")
    .option("--list", "list the suite's tasks instead of running them")
    .option("--json", "print the summary (or, with --list, the tasks) as JSON")
    .action(act.run(async () => (await import("./commands/eval.js")).evalCommand));

  program
    .command("demo")
    .description("offline demo: a scripted model fixes a broken project through the gate")
    .option("--json", "print events as JSON lines")
    .option("--keep", "keep the temp workspace")
    .action(act.run(async () => (await import("./commands/demo.js")).demoCommand));
}

/** The catalog: search, capabilities, manifests, one-off calls, the parser, profiles. */
function addCatalogCommands(program: Command, act: Actions): void {
  program
    .command("search")
    .description("ranked capability search")
    .argument("<query>", "what you need, in a few words")
    .option("--limit <n>", "most hits (default 5)")
    .option("--json", "print SearchHit[] as JSON")
    .action(act.run(async () => (await import("./commands/catalog.js")).searchCommand));

  const capabilities = program
    .command("capabilities")
    .description("list capabilities (manifests) with their tools")
    .option("--json", "print the manifests as JSON")
    .action(act.run(async () => (await import("./commands/catalog.js")).capabilitiesCommand));
  capabilities
    .command("show")
    .description("one capability's tools with signatures")
    .argument("<name>", "capability name")
    .option("--json", "print the manifest as JSON")
    .action(act.run(async () => (await import("./commands/catalog.js")).showCapabilityCommand));

  program
    .command("capability")
    .description("capability authoring tools")
    .command("lint")
    .description("validate a capability manifest (a .json file, a module, a package directory or name)")
    .argument("<file-or-package>", "what to check")
    .option("--json", "print the result as JSON")
    .action(act.local(async () => (await import("./commands/lint.js")).lintCommand));

  program
    .command("call")
    .description("call one tool through the executor (exit 0 ok, 1 tool failure, 2 rejected)")
    .argument("<tool>", "tool name, e.g. fs.read or <server>/<tool>")
    .argument("[arguments]", "tool arguments as a JSON object")
    .option("--workspace <dir>", "workspace root")
    .option("--profile <name>", "profile whose rights apply")
    .addOption(approvalOption("ask before tools run"))
    .option("--json", "print the ToolResult as JSON")
    .action(act.run(async () => (await import("./commands/call.js")).callCommand));

  program
    .command("parse")
    .description("run the strict action parser on model output (argument or stdin)")
    .argument("[output]", "the model output")
    .option("--json", "print the parse result as JSON")
    .action(act.local(async () => (await import("./commands/parse.js")).parseCommand));

  const profiles = program
    .command("profiles")
    .description("list profiles (runtime policies)")
    .option("--json", "print as JSON")
    .action(act.run(async () => (await import("./commands/profiles.js")).profilesCommand));
  profiles
    .command("infer")
    .description("print the profile a goal would start in")
    .argument("<goal>", "the goal")
    .option("--json", "print the profile and the deciding word as JSON")
    .action(act.local(async () => (await import("./commands/profiles.js")).inferProfileCommand));
}

/** MCP servers: list and call their tools, serve the gate, log in and out, status. */
function addMcpCommands(program: Command, act: Actions): void {
  const mcp = program.command("mcp").description("talk to MCP servers, or serve the gate over MCP");
  const target = (c: Command) =>
    c
      .option("--url <url>", "a Streamable HTTP (or SSE) server")
      .option("--command <command line>", "a stdio server to spawn (no shell)")
      .option("--timeout <ms>", "per-call timeout (default 30000)")
      .option("--json", "print JSON");
  target(
    mcp
      .command("tools")
      .description("list one server's tools: a configured server by name, or --url/--command")
      .argument("[server]", "a server from mcpServers in capgate.config.json"),
  ).action(act.run(async () => (await import("./commands/mcp.js")).mcpToolsCommand));
  target(
    mcp
      .command("call")
      .description("call one tool on one server")
      .argument("<tool>", "tool name")
      .argument("[arguments]", "JSON object"),
  ).action(act.local(async () => (await import("./commands/mcp.js")).mcpCallCommand));
  mcp
    .command("serve")
    .description(
      "serve the gate (capability_search, capability_load, capability_call, memory_search) over stdio",
    )
    .option(
      "--workspace <dir>",
      "workspace root (or CAPGATE_WORKSPACE; the current directory is refused when it is / or $HOME)",
    )
    .option(
      "--config <file>",
      "config file (or CAPGATE_CONFIG; default: the workspace's capgate.config.json)",
    )
    .option(
      "--profile <name>",
      "profile of the session (default: the config's gate.profile, else Orchestrator)",
    )
    .option("--preload <capabilities>", "capabilities loaded from the start, comma-separated (e.g. fs,shell)")
    .addOption(approvalOption("ask the client's user (MCP elicitation) before tools run"))
    .action(act.run(async () => (await import("./commands/mcp.js")).mcpServeCommand));
  mcp
    .command("login")
    .description("log in to a configured url server with OAuth (prints the URL; never opens a browser)")
    .argument("<server>", "server name from mcpServers")
    .option("--timeout <ms>", "how long to wait for the redirect (default 300000)")
    .action(act.run(async () => (await import("./commands/mcp-auth.js")).mcpLoginCommand));
  mcp
    .command("logout")
    .description("forget a server's stored OAuth login")
    .argument("<server>", "server name from mcpServers")
    .action(act.run(async () => (await import("./commands/mcp-auth.js")).mcpLogoutCommand));
  mcp
    .command("status")
    .description("each configured server's connection and login state")
    .option("--offline", "do not connect; show stored login state only")
    .option("--timeout <ms>", "connect budget per server (default 5000)")
    .option("--json", "print JSON")
    .action(act.run(async () => (await import("./commands/mcp-auth.js")).mcpStatusCommand));
}

/** Long-running services and tools around runs: serve, worker, trace, the hook. */
function addServiceCommands(program: Command, act: Actions): void {
  program
    .command("serve")
    .description("start the HTTP server (gateway, runs, /mcp, web viewer)")
    .option("--host <host>", "bind address", "127.0.0.1")
    .option("--port <port>", "port", "7777")
    .option("--workspace <dir>", "workspace root")
    .option("--token <token>", "bearer token (default: $CAPGATE_TOKEN or generated)")
    .option(
      "--database <url>",
      "PostgreSQL URL: hand runs to `capgate worker` nodes (default: $CAPGATE_DATABASE_URL, else the config's database)",
    )
    .action(act.run(async () => (await import("./commands/serve.js")).serveCommand));

  program
    .command("worker")
    .description("execute queued runs from PostgreSQL, each in a fresh checkout of the workspace")
    .option("--database <url>", "PostgreSQL URL (default: $CAPGATE_DATABASE_URL, else the config's database)")
    .option("--concurrency <n>", "runs at once on this worker", "1")
    .option("--workspace <dir>", "workspace each run gets a fresh checkout of")
    .option("--work-dir <dir>", "where the per-run checkouts go (default: a temp dir)")
    .action(act.run(async () => (await import("./commands/worker.js")).workerCommand));

  program
    .command("trace")
    .description("pretty-print a stored trace (no argument: list recent runs)")
    .argument("[run]", "run id or .jsonl file")
    .option("--json", "print the raw events")
    .action(act.run(async () => (await import("./commands/trace.js")).traceCommand));

  program
    .command("hook")
    .description(
      "answer another agent's tool-call hook with the shell policy (claude-code: a PreToolUse hook)",
    )
    .argument("<agent>", "claude-code")
    .action(async (agent: string) => {
      const { runHookCommand } = await import("./hook/entry.js");
      const config = program.opts<GlobalOptions>().config;
      act.setExit(await runHookCommand([agent, ...(config ? ["--config", config] : [])]));
    });
}

export { CommanderError } from "commander";
