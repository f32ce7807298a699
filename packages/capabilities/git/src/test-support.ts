// Shared by the git tests (not exported): real repositories in temp dirs and a real
// ToolContext whose environment shuts out the machine's own git configuration.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolContext,
  type ToolResult,
} from "@capgate/tools";
import { capability } from "./capability.js";

export interface GitTestRepo {
  /** Parent temp dir (holds home/ and ws/); removed by close(). */
  root: string;
  workspace: string;
  env: Record<string, string>;
  ctx: ExecuteContext;
  call(tool: string, args?: Record<string, unknown>, over?: Partial<ToolContext>): Promise<ToolResult>;
  /** Run real git in the workspace (test setup and checks), returning stdout. */
  git(...args: string[]): string;
  /** Write `text` to the object store as a blob; its id. */
  hashObject(text: string): string;
  write(path: string, content: string): void;
  close(): Promise<void>;
}

export interface RepoOptions {
  /** `git init` the workspace (default true). */
  init?: boolean;
  /** Configure user.name/user.email in the repository (default true). */
  identity?: boolean;
}

export function createRepo(options: RepoOptions = {}): GitTestRepo {
  const root = mkdtempSync(join(tmpdir(), "capgate-git-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  mkdirSync(home);
  mkdirSync(workspace);
  // An empty HOME and no system config: the machine's ~/.gitconfig (identity, hooks) plays no part.
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    LANG: "C.UTF-8",
  };
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: workspace, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (options.init !== false) {
    git("init", "-q", "-b", "main");
    if (options.identity !== false) {
      git("config", "user.name", "Test Author");
      git("config", "user.email", "test@example.com");
    }
  }
  const ctx: ExecuteContext = {
    workspace,
    signal: new AbortController().signal,
    env,
    profile: { name: "Coder", maySpawnWorkers: false },
    limits: { ...DEFAULT_LIMITS },
    policy: {},
    services: {},
    resources: createHostResources(),
    stateDir: root,
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: (tool) => tool.startsWith("git.") },
  };
  return {
    root,
    workspace,
    env,
    ctx,
    call: (tool, args = {}, over = {}) => executeTool(tool, args, { ...ctx, ...over }),
    git,
    hashObject: (text) =>
      execFileSync("git", ["hash-object", "-w", "--stdin"], {
        cwd: workspace,
        env,
        input: text,
        encoding: "utf8",
      }).trim(),
    write: (path, content) => {
      const file = join(workspace, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    },
    close: async () => {
      await ctx.resources.closeAll();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A repository with two commits on main: README.md, then src/app.ts. */
export function createRepoWithHistory(): GitTestRepo {
  const repo = createRepo();
  repo.write("README.md", "# demo\n");
  repo.git("add", "README.md");
  repo.git("commit", "-q", "-m", "Add readme");
  repo.write("src/app.ts", "export const answer = 41;\n");
  repo.git("add", "src/app.ts");
  repo.git("commit", "-q", "-m", "Add app");
  return repo;
}
