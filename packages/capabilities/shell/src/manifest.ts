import type { ManifestLike } from "@capgate/tools";

const command = {
  type: "string",
  minLength: 1,
  maxLength: 10000,
  description: "Shell command line, e.g. 'npm test' or 'make build && ./run.sh'.",
} as const;

const cwd = {
  type: "string",
  minLength: 1,
  maxLength: 4096,
  description: "Working directory relative to the workspace root (default: the root); cannot leave it.",
} as const;

const id = {
  type: "string",
  minLength: 1,
  maxLength: 100,
  description: "Process id returned by shell.start.",
} as const;

/**
 * The shell capability: commands in the workspace. Every command line passes the shell
 * policy (parsed, not pattern-matched) before it runs, which is why the descriptions may
 * promise that GUI openers are denied.
 */
export const manifest = {
  name: "shell",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Run shell commands in the workspace: run tests and builds, install dependencies, run scripts, keep dev servers in the background. Commands that open GUI apps or browsers are denied.",
  profileFit: ["Coder", "Verifier"],
  tools: [
    {
      name: "shell.run",
      description:
        "Run a command line to completion and return its exit code, stdout and stderr (long output keeps head and tail); use it to run tests, builds and scripts. GUI openers (open, xdg-open, browsers, osascript, python -m webbrowser) are denied: use browser_panel.open for web pages and shell.start for servers.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          command,
          cwd,
          timeout_ms: {
            type: "integer",
            minimum: 100,
            maximum: 600000,
            description:
              "Kill the command after this many milliseconds (default 120000; the host's per-call limit still applies).",
          },
        },
        required: ["command"],
      },
    },
    {
      name: "shell.start",
      description:
        "Start a long-running command (dev server, watcher) in the background and return its id at once; read its output with shell.output and end it with shell.stop. Same policy as shell.run.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { command, cwd },
        required: ["command"],
      },
    },
    {
      name: "shell.output",
      description:
        "Show the latest output of a background process started with shell.start and whether it is still running (with its exit code once it has ended).",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          id,
          tail_lines: {
            type: "integer",
            minimum: 1,
            maximum: 5000,
            description: "How many of the last output lines to return (default 100).",
          },
        },
        required: ["id"],
      },
    },
    {
      name: "shell.stop",
      description:
        "Stop a background process started with shell.start, with its child processes, and return its final output.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { id },
        required: ["id"],
      },
    },
  ],
} as const satisfies ManifestLike;
