import type { ManifestLike } from "@capgate/tools";

// A leading '-' would turn a ref into a git option; the schema refuses it before git runs.
const ref = {
  type: "string",
  minLength: 1,
  maxLength: 500,
  pattern: "^[^-]",
  description: "Branch, tag or commit, e.g. 'main', 'v1.2.0', 'HEAD~1', 'a1b2c3d' (must not start with '-').",
} as const;

const path = {
  type: "string",
  minLength: 1,
  maxLength: 4096,
  description: "File or directory relative to the workspace root.",
} as const;

/** The git capability: the repository at the workspace root. */
export const manifest = {
  name: "git",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Version control for the workspace repository: the history of the project and of each file (what changed, when, by whom), your uncommitted local edits and undoing them (git.diff shows them, git.show 'HEAD:path' has the committed text), staging, commits, branches, checkout. Nothing is pushed.",
  profileFit: ["Coder", "Verifier"],
  tools: [
    {
      name: "git.status",
      description:
        "Show the current branch and which files are modified, staged or untracked. Start here before committing.",
      risk: "read",
      inputSchema: { type: "object", additionalProperties: false, properties: {} },
    },
    {
      name: "git.diff",
      description:
        "Show your local, uncommitted edits (what changed since the last commit) as a unified diff: working tree against the index, or with `staged` the index against HEAD (what git.commit would record).",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          path: { ...path, description: "Only changes under this file or directory (default: all)." },
          staged: {
            type: "boolean",
            description: "Show staged changes instead of unstaged ones (default false).",
          },
        },
      },
    },
    {
      name: "git.log",
      description:
        "Show the commit history (log) of the project, or with `path` the history of one file or directory: the commits that changed it, newest first, with hash, author, date and subject.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          limit: {
            type: "integer",
            minimum: 1,
            maximum: 500,
            description: "Most commits to list (default 20).",
          },
          path: { ...path, description: "Only commits touching this file or directory." },
        },
      },
    },
    {
      name: "git.show",
      description:
        "Show one commit (message and diff), or a file as it was at a revision with 'REV:path' (e.g. 'HEAD~1:src/index.ts'); 'HEAD:path' is the last committed version, the text to write back with fs.write to undo local edits to that file.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { ref: { ...ref, description: "Commit, or 'REV:path' for a file at that revision." } },
        required: ["ref"],
      },
    },
    {
      name: "git.add",
      description: "Stage files for the next commit; pass ['.'] to stage every change in the workspace.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          paths: {
            type: "array",
            minItems: 1,
            maxItems: 1000,
            items: { ...path },
            description: "Files or directories relative to the workspace root.",
          },
        },
        required: ["paths"],
      },
    },
    {
      name: "git.commit",
      description:
        "Record the staged changes as a new commit with `message`; fails when nothing is staged, so call git.add first.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          message: {
            type: "string",
            minLength: 1,
            maxLength: 10000,
            description: "Commit message: a short subject line, optionally a blank line and a body.",
          },
        },
        required: ["message"],
      },
    },
    {
      name: "git.branch",
      description:
        "Without `name`, list branches and mark the current one. With `name`, create that branch at HEAD without switching to it (use git.checkout to switch).",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          name: {
            type: "string",
            minLength: 1,
            maxLength: 200,
            pattern: "^[A-Za-z0-9_][A-Za-z0-9._/-]*$",
            description:
              "New branch name, e.g. 'fix/login-timeout' (letters, digits, . _ / -; no leading '-').",
          },
        },
      },
    },
    {
      name: "git.checkout",
      description:
        "Switch to a branch or commit; with `create`, create branch `ref` at HEAD and switch to it. Fails instead of overwriting uncommitted changes.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          ref,
          create: {
            type: "boolean",
            description: "Create `ref` as a new branch first (default false).",
          },
        },
        required: ["ref"],
      },
    },
  ],
} as const satisfies ManifestLike;
