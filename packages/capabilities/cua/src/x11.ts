import { type ProcessResult, runProcess } from "@capgate/sandbox";
import { CapgateError } from "@capgate/schema";
import type { ToolContext, ToolResult } from "@capgate/tools";

/** Appended to every "no display" message: what the model should do instead. */
export const NO_DISPLAY_HINT = "cua needs a desktop session; use browser_panel for web pages";

/** Codes of the failures cua reports as `{ success: false, data: { code } }`. */
export type CuaFailureCode = "no_display" | "missing_program" | "out_of_range" | "unknown_key" | "x11_failed";

/** The screen of `$DISPLAY` as xdotool reports it. */
export interface Screen {
  display: string;
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

/** A program cua runs, with the Debian package that provides it. */
const PACKAGES: Record<string, string> = { xdotool: "xdotool", import: "imagemagick" };

/** A failure the model should read as is (no stack, no "failed:" prefix from the executor). */
export function cuaFailure(code: CuaFailureCode, message: string): CapgateError {
  return new CapgateError(code, message);
}

const CODES = new Set<string>(["no_display", "missing_program", "out_of_range", "unknown_key", "x11_failed"]);

/** Run a handler body and turn cua's own failures into failed ToolResults carrying their code. */
export async function reportFailures(body: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await body();
  } catch (error) {
    if (CapgateError.isInstance(error) && CODES.has(error.code)) {
      return { success: false, summary: error.message, data: { code: error.code } };
    }
    throw error;
  }
}

/**
 * Run one X11 helper program without a shell, with the context's environment (DISPLAY,
 * XAUTHORITY), workspace as cwd, abort signal and a time limit. A missing program becomes
 * a `missing_program` failure naming its Debian package.
 */
export async function runX11(
  ctx: ToolContext,
  file: "xdotool" | "import",
  args: readonly string[],
  timeoutMs = ctx.limits.timeoutMs,
): Promise<ProcessResult> {
  try {
    return await runProcess({
      file,
      args,
      cwd: ctx.workspace,
      env: ctx.env,
      timeoutMs: Math.min(timeoutMs, ctx.limits.timeoutMs),
      maxOutputBytes: 16 * 1024,
      signal: ctx.signal,
    });
  } catch (error) {
    if (CapgateError.isInstance(error) && error.code === "spawn_failed") {
      const pkg = PACKAGES[file];
      const what = file === "import" ? "ImageMagick's `import`" : "`xdotool`";
      throw cuaFailure(
        "missing_program",
        `${what} could not be started (${error.message}); cua needs it on PATH: install the Debian package '${pkg}' (apt-get install ${pkg}).`,
      );
    }
    throw error;
  }
}

/** First meaningful lines of stderr, for messages. */
export function stderrLine(result: ProcessResult): string {
  const text = result.stderr.trim().split("\n").slice(0, 2).join(" / ");
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** A failed run of an X11 program as a failure that says how it ended. */
export function runFailure(what: string, result: ProcessResult): CapgateError {
  const how = result.timedOut
    ? "timed out"
    : result.aborted
      ? "was aborted"
      : result.signal
        ? `was killed by ${result.signal}`
        : `exited with code ${result.exitCode}`;
  const err = stderrLine(result);
  return cuaFailure("x11_failed", `${what} ${how}${err ? `: ${err}` : ""}.`);
}

/**
 * Check that `$DISPLAY` (from the context, not the host process) names a reachable X
 * server, and return its screen size. Every cua tool starts here, so without a desktop
 * each fails with the same clear message.
 */
export async function openScreen(ctx: ToolContext): Promise<Screen> {
  const display = ctx.env.DISPLAY;
  if (display === undefined || display === "") {
    throw cuaFailure("no_display", `no X display: DISPLAY is not set — ${NO_DISPLAY_HINT}.`);
  }
  const result = await runX11(ctx, "xdotool", ["getdisplaygeometry"], 10_000);
  if (result.exitCode !== 0) {
    const err = stderrLine(result);
    const unreachable = result.timedOut || /can't open display|cannot open display/i.test(result.stderr);
    if (unreachable) {
      throw cuaFailure(
        "no_display",
        `no X display: the X server of DISPLAY=${display} is not reachable (${result.timedOut ? "no answer" : err}) — ${NO_DISPLAY_HINT}.`,
      );
    }
    throw runFailure(`xdotool getdisplaygeometry on DISPLAY=${display}`, result);
  }
  const match = /^(\d+)\s+(\d+)/.exec(result.stdout.trim());
  if (!match) {
    throw cuaFailure(
      "x11_failed",
      `xdotool getdisplaygeometry printed ${JSON.stringify(result.stdout.slice(0, 80))}, not a screen size.`,
    );
  }
  return { display, width: Number(match[1]), height: Number(match[2]) };
}

/** Refuse a point outside the screen before anything moves. */
export function checkPoint(screen: Screen, point: Point): void {
  if (point.x < screen.width && point.y < screen.height) return;
  const { width, height } = screen;
  const which = [point.x >= width ? `x=${point.x}` : "", point.y >= height ? `y=${point.y}` : ""]
    .filter(Boolean)
    .join(" and ");
  throw cuaFailure(
    "out_of_range",
    `(${point.x}, ${point.y}) is outside the ${width}×${height} screen (${which}): x must be 0–${width - 1} and y 0–${height - 1}. Take cua.screenshot to see the screen; nothing was done.`,
  );
}

/** Parse `getmouselocation` output ("x:10 y:20 screen:0 window:123"). */
export function parseMouseLocation(stdout: string): Point | undefined {
  const match = /x:(-?\d+)\s+y:(-?\d+)/.exec(stdout);
  return match ? { x: Number(match[1]), y: Number(match[2]) } : undefined;
}

/** "1024×768 screen of :97" for summaries. */
export function describeScreen(screen: Screen): string {
  return `${screen.width}×${screen.height} screen of DISPLAY=${screen.display}`;
}
