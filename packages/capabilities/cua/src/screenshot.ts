import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { ToolContext } from "@capgate/tools";
import { realWorkspace, resolveInWorkspace, toWorkspaceRelative } from "@capgate/workspace";
import { cuaFailure, runFailure, runX11, type Screen } from "./x11.js";

/** Where screenshots go when the call names no path (relative to the workspace). */
export const DEFAULT_SCREENSHOT_DIR = ".capgate/screenshots";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface SavedScreenshot {
  /** Workspace-relative path of the PNG. */
  path: string;
  absolutePath: string;
  width: number;
  height: number;
  bytes: number;
}

/** A fresh default path: `.capgate/screenshots/screen-<UTC time>-<random>.png`. */
export function defaultScreenshotPath(now = new Date()): string {
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  return `${DEFAULT_SCREENSHOT_DIR}/screen-${stamp}-${randomBytes(3).toString("hex")}.png`;
}

/** Width and height from a PNG's IHDR chunk, or undefined when the bytes are not a PNG. */
export function pngSize(header: Uint8Array): { width: number; height: number } | undefined {
  if (header.length < 24) return undefined;
  const bytes = Buffer.from(header.buffer, header.byteOffset, header.byteLength);
  if (!bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  if (bytes.toString("latin1", 12, 16) !== "IHDR") return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/**
 * Capture the whole X screen (root window) as a PNG at `userPath` inside the workspace.
 *
 * ImageMagick's `import` writes to a hidden temporary name in the target's (checked, real)
 * directory, which is then renamed onto the target: a rename replaces a symlink at the
 * target instead of writing through it, and a failed capture leaves no half-written file.
 */
export async function captureScreen(
  ctx: ToolContext,
  screen: Screen,
  userPath: string,
): Promise<SavedScreenshot> {
  const options = { forWrite: true, allowMissing: true, property: "path" } as const;
  let target = await resolveInWorkspace(ctx, userPath, options);
  await mkdir(dirname(target), { recursive: true });
  // Re-check now that the directories exist (one of them could have been a link created meanwhile).
  target = await resolveInWorkspace(ctx, userPath, options);
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const result = await runX11(ctx, "import", ["-silent", "-window", "root", `png:${temp}`]);
    if (result.exitCode !== 0) throw runFailure(`import -window root on DISPLAY=${screen.display}`, result);
    const size = await readPngSize(temp);
    if (!size) throw cuaFailure("x11_failed", "import finished but did not write a PNG image.");
    const { size: bytes } = await stat(temp);
    await rename(temp, target);
    const root = await realWorkspace(ctx.workspace);
    return { path: toWorkspaceRelative(root, target), absolutePath: target, ...size, bytes };
  } finally {
    await rm(temp, { force: true });
  }
}

async function readPngSize(path: string): Promise<{ width: number; height: number } | undefined> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return undefined;
  try {
    const header = Buffer.alloc(24);
    const { bytesRead } = await handle.read(header, 0, 24, 0);
    return pngSize(header.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
