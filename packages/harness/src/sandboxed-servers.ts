import { isAbsolute, resolve } from "node:path";
import type { McpServersMap, McpStdioServerConfig } from "@capgate/mcp-client";
import { SANDBOX_MARK_VAR } from "@capgate/process-group";
import { containCommand, sandboxCommand, systemBash } from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import type { PolicyConfig } from "@capgate/tools";

/**
 * The servers map with each `"sandbox": true` stdio server's command replaced by the
 * bubblewrap invocation that runs it in the OS sandbox (the same one as shell commands:
 * workspace writable, secrets and the state dir hidden, no desktop, `shell.network`).
 * Where the sandbox cannot start, the server is replaced by a command that fails with the
 * refusal on stderr — it never starts unsandboxed.
 */
export async function sandboxServers(
  servers: McpServersMap,
  names: readonly string[],
  options: {
    workspace: string;
    stateDir: string;
    policy: PolicyConfig;
    env: Record<string, string | undefined>;
  },
): Promise<McpServersMap> {
  if (names.length === 0) return servers;
  const out: McpServersMap = { ...servers };
  for (const name of names) {
    const entry = servers[name] as McpStdioServerConfig | undefined;
    if (!entry || typeof entry.command !== "string") continue;
    const cwd = entry.cwd
      ? isAbsolute(entry.cwd)
        ? entry.cwd
        : resolve(options.workspace, entry.cwd)
      : options.workspace;
    try {
      const wrapped = await sandboxCommand([entry.command, ...(entry.args ?? [])], {
        workspace: options.workspace,
        cwd,
        // The MCP client builds the server's environment itself; bwrap's --unsetenv strips desktop variables from it.
        env: { PATH: options.env.PATH, HOME: options.env.HOME },
        stateDir: options.stateDir,
        ...(options.policy.shell ? { shell: options.policy.shell } : {}),
        ...(options.policy.web ? { web: options.policy.web } : {}),
      });
      // Proxy settings must reach the server even though the client builds its own env.
      const proxyEnv: Record<string, string> = {};
      for (const [key, value] of Object.entries(wrapped.env)) {
        if (/_proxy$/i.test(key) && typeof value === "string") proxyEnv[key] = value;
      }
      out[name] = {
        ...entry,
        command: wrapped.file,
        args: wrapped.args,
        env: { ...proxyEnv, ...(entry.env ?? {}) },
      };
    } catch (error) {
      // Refused like a command would be (no bubblewrap, or a .git link the sandbox cannot pin):
      // the server fails to start with the reason, the rest of the harness works.
      if (
        !CapgateError.isInstance(error) ||
        (error.code !== "sandbox_unavailable" && error.code !== "unsafe_repository")
      )
        throw error;
      out[name] = {
        ...entry,
        command: systemBash(),
        args: [
          "--noprofile",
          "--norc",
          "-c",
          'printf "%s\\n" "$1" >&2; exit 1',
          "capgate",
          `MCP server '${name}' has "sandbox": true, but ${error.message}`,
        ],
      };
    }
  }
  return out;
}

/**
 * The servers map with every stdio server that is not sandboxed contained
 * (`containCommand`): its own pid namespace, so nothing it starts — a setsid grandchild, a
 * daemon — outlives it, its close, or a `kill -9` of capgate. Sandboxed servers have the
 * sandbox's namespace already. A command that is not on the server's PATH is left as it is,
 * for the client's own "not found" error. Returns the marks of servers that could only be
 * marked (no pid namespace here), to be killed when the harness closes (`byServer`: the
 * same marks by server, for ending one server's leftovers when a reload removes it).
 */
export function containServers(
  servers: McpServersMap,
  sandboxed: readonly string[],
  hostEnvPath: string | undefined,
): { servers: McpServersMap; marks: string[]; byServer: Record<string, string> } {
  const out: McpServersMap = { ...servers };
  const marks: string[] = [];
  const byServer: Record<string, string> = {};
  for (const [name, entry] of Object.entries(servers)) {
    const stdio = entry as McpStdioServerConfig;
    if (sandboxed.includes(name) || typeof stdio.command !== "string") continue;
    const env = { ...(stdio.env ?? {}) };
    let contained: ReturnType<typeof containCommand>;
    try {
      contained = containCommand(stdio.command, stdio.args ?? [], { ...env, PATH: env.PATH ?? hostEnvPath });
    } catch (error) {
      if (CapgateError.isInstance(error) && error.code === "spawn_failed") continue;
      throw error;
    }
    if (contained.mark) {
      marks.push(contained.mark);
      byServer[name] = contained.mark;
      out[name] = { ...stdio, env: { ...env, ...markOf(contained.env) } };
    } else {
      out[name] = { ...stdio, command: contained.file, args: contained.args };
    }
  }
  return { servers: out, marks, byServer };
}

/** The mark variable of a marked command's environment (the client builds the rest itself). */
function markOf(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (key === SANDBOX_MARK_VAR && value !== undefined) out[key] = value;
  }
  return out;
}
