import { lstat } from "node:fs/promises";
import { dirname } from "node:path";
import type { ToolContext, ToolResult } from "@capgate/tools";
import { describeFileType, fileTypeOf, makeDirectories } from "@capgate/workspace";
import { failure, formatBytes, resolvePath, withExisting } from "./paths.js";
import { countLines, writeAtomic } from "./text-file.js";

export interface WriteArgs {
  path: string;
  content: string;
}

/**
 * fs.write: create or replace a whole file. Missing parents are created (the guard has
 * already checked that the nearest existing one is inside the workspace), the content is
 * written to a temporary file in the same directory and renamed into place, and an
 * existing file keeps its permissions. A symlink at the path is refused by the guard.
 */
export async function writeFile(args: WriteArgs, ctx: ToolContext): Promise<ToolResult> {
  return withExisting(ctx, args.path, async () => {
    const { root, abs, rel } = await resolvePath(ctx, args.path, { forWrite: true, allowMissing: true });
    const existing = await lstat(abs).catch(() => null);
    if (existing?.isDirectory()) {
      return failure(`${rel} is a directory; fs.write writes files. Nothing was written.`);
    }
    if (existing && !existing.isFile()) {
      const type = fileTypeOf(existing);
      return failure(
        `${rel} exists and is ${describeFileType(type)}, not a regular file; fs.write only replaces regular files (it never opens or writes into a pipe, socket or device). Nothing was written.`,
        { path: rel, type },
      );
    }
    // Missing parents made from the workspace root down, each inside its parent held open:
    // a directory swapped for a link meanwhile cannot send them outside.
    const made = await makeDirectories(root, dirname(abs));
    await made.dir.close();
    const created = made.created;
    const bytes = await writeAtomic(abs, args.content, existing ? existing.mode & 0o7777 : undefined);
    const lines = countLines(args.content);
    const what = existing
      ? `Replaced ${rel} (was ${formatBytes(existing.size)})`
      : `Created ${rel}${created ? " and its missing parent directories" : ""}`;
    return {
      success: true,
      summary: `${what}: ${bytes} bytes, ${lines} line${lines === 1 ? "" : "s"}.`,
      data: { path: rel, bytes, lines, created: !existing },
    };
  });
}
