import type { ManifestLike } from "@capgate/tools";

const path = {
  type: "string",
  minLength: 1,
  maxLength: 4096,
  description: "Path relative to the workspace root (an absolute path must lie inside it).",
} as const;

/**
 * The fs capability: files and directories inside the workspace. Descriptions are what a
 * model reads when it picks a tool, so they say what each tool is for and what to use instead.
 */
export const manifest = {
  name: "fs",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Open and read files, write, edit (patch), search, list, move and delete files and directories in the workspace. Paths are relative to the workspace root and cannot leave it, not even through symlinks.",
  profileFit: ["Coder", "Verifier"],
  tools: [
    {
      name: "fs.read",
      description:
        "Open and read a text file: show its contents (to look at a file). The reply is a header line 'lines A–B of N', then the lines exactly as in the file (no line numbers added), ready to copy into fs.patch. Large files paginate: pass `offset` (first line) and `limit` (line count); the reply says where the next page starts.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          path,
          offset: {
            type: "integer",
            minimum: 1,
            maximum: 100000000,
            description: "First line to return, 1-based (default 1).",
          },
          limit: {
            type: "integer",
            minimum: 1,
            maximum: 10000,
            description:
              "Most lines to return (default 2000); a page also stops at the host's read byte limit.",
          },
        },
        required: ["path"],
      },
    },
    {
      name: "fs.write",
      description:
        "Create a file or replace its whole content, creating missing parent directories. To change part of an existing file use fs.patch instead.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          path,
          content: {
            type: "string",
            maxLength: 1048576,
            description: "The complete new file content, UTF-8 (may be empty).",
          },
        },
        required: ["path", "content"],
      },
    },
    {
      name: "fs.patch",
      description:
        "Edit a file by replacing `old` with `new`. `old` must occur exactly once in the file (include surrounding lines to make it unique) and is matched and replaced literally, no regex; otherwise nothing changes.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          path,
          old: {
            type: "string",
            minLength: 1,
            maxLength: 1048576,
            description: "Exact text to replace, copied from the file, whitespace included.",
          },
          new: {
            type: "string",
            maxLength: 1048576,
            description: "Replacement text, inserted literally (may be empty to delete).",
          },
        },
        required: ["path", "old", "new"],
      },
    },
    {
      name: "fs.list",
      description:
        "List the files and subdirectories of a directory (default: the workspace root); directories end with '/'. Use `depth` to see nested levels.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          path: { ...path, description: "Directory relative to the workspace root (default: the root)." },
          depth: {
            type: "integer",
            minimum: 1,
            maximum: 10,
            description: "How many levels to descend (default 1: direct entries only).",
          },
        },
      },
    },
    {
      name: "fs.search",
      description:
        "Search inside files for a regular expression, e.g. to find where a function is defined or used; returns matching lines as path:line: text. Respects .gitignore and skips node_modules and .git; use fs.glob to find files by name.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          pattern: {
            type: "string",
            minLength: 1,
            maxLength: 1000,
            description: "JavaScript regular expression, case-sensitive, matched against each line.",
          },
          path: { ...path, description: "Directory or file to search (default: the workspace root)." },
          glob: {
            type: "string",
            minLength: 1,
            maxLength: 500,
            description: "Only search files whose path matches this glob, e.g. '**/*.ts'.",
          },
          max_results: {
            type: "integer",
            minimum: 1,
            maximum: 1000,
            description: "Most matching lines to return (default 100).",
          },
        },
        required: ["pattern"],
      },
    },
    {
      name: "fs.glob",
      description:
        "Find files by name pattern, e.g. '**/*.test.ts' or 'src/**/index.*', returning workspace-relative paths. Respects .gitignore and skips node_modules and .git; use fs.search to search file contents.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          pattern: {
            type: "string",
            minLength: 1,
            maxLength: 500,
            description: "Glob pattern: * within a name, ** across directories, {a,b} alternatives.",
          },
          path: { ...path, description: "Directory to search from (default: the workspace root)." },
        },
        required: ["pattern"],
      },
    },
    {
      name: "fs.stat",
      description:
        "Check whether a path exists and get its type (file, directory, symlink), size in bytes and modification time.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path },
        required: ["path"],
      },
    },
    {
      name: "fs.move",
      description:
        "Move or rename a file or directory inside the workspace, creating missing parent directories of `to`. Fails if `to` already exists.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          from: { ...path, description: "Existing file or directory, relative to the workspace root." },
          to: { ...path, description: "New path, relative to the workspace root; must not exist yet." },
        },
        required: ["from", "to"],
      },
    },
    {
      name: "fs.delete",
      description:
        "Delete a file, or a directory with everything inside it. It cannot be undone; the workspace root itself cannot be deleted.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path },
        required: ["path"],
      },
    },
    {
      name: "fs.mkdir",
      description:
        "Create a directory and any missing parents; succeeds if it already exists. fs.write creates parents by itself.",
      risk: "write",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { path },
        required: ["path"],
      },
    },
  ],
} as const satisfies ManifestLike;
