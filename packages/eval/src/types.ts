/** How the model reaches tools in a run. */
export type EvalMode = "gate" | "exposed" | "code";

export const EVAL_MODES: readonly EvalMode[] = ["gate", "exposed", "code"];

/** One check of the final state; a task succeeds only when all of its checks pass. */
export type TaskCheck =
  | {
      /** A shell command (bash) that must exit 0, run in the workspace after the run. */
      command: string;
      timeoutMs?: number;
    }
  | {
      /** A workspace file (relative path). */
      file: string;
      equals?: string;
      contains?: string | string[];
      /** A JavaScript regular expression the whole content must match somewhere. */
      matches?: string;
      /** false: the file must not exist. Default true when no content check is given. */
      exists?: boolean;
    }
  | {
      /** A tool call that must have happened (and succeeded, unless `success: false`), by the name it is called by: `fs.write`, `memory/create_entities`. */
      toolCall: string;
      /** Each given property must equal the call's argument (deep); others may be anything. */
      arguments?: Record<string, unknown>;
      success?: boolean;
    };

export interface GitCommit {
  message: string;
  files?: Record<string, string>;
  delete?: string[];
}

export interface TaskWorkspace {
  /** A directory beside the task file whose contents are copied into the workspace. */
  dir?: string;
  /** Files written into the workspace (path → content), after `dir`. */
  files?: Record<string, string>;
  /**
   * Make the workspace a git repository: `dir` and `files` are the first commit
   * ("initial"), then `commits` in order, then `uncommitted` files are written without committing.
   */
  git?: { branch?: string; commits?: GitCommit[]; uncommitted?: Record<string, string> };
}

export interface TaskBudget {
  /** Model steps (default 30). */
  steps?: number;
  /** Prompt + completion tokens as the provider reports them (not enforced when it reports none). */
  tokens?: number;
  /** Wall time of the run in seconds (default 300). */
  seconds?: number;
}

/** A task as written in its file, checked against `taskSchema`. */
export interface TaskSpec {
  id?: string;
  goal: string;
  tags?: string[];
  /** A profile name; default: inferred from the goal, as `capgate run` does. */
  profile?: string;
  workspace?: TaskWorkspace;
  /** Claude Desktop's shape; `{{…}}` placeholders are filled in per run. */
  mcpServers?: Record<string, Record<string, unknown>>;
  /** A directory beside the task file served over HTTP on 127.0.0.1 during the run, at `{{web}}`. */
  web?: { dir: string };
  check: TaskCheck[];
  budget?: TaskBudget;
}

/** A loaded task: its spec, its id and where it lives. */
export interface Task extends TaskSpec {
  id: string;
  tags: string[];
  /** The task's directory (fixtures, hidden check scripts). */
  dir: string;
  /** The task file. */
  file: string;
}

export interface Suite {
  name: string;
  description?: string;
  dir: string;
  tasks: Task[];
}
