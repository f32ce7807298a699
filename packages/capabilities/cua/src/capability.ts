import { readFile } from "node:fs/promises";
import { defineCapability, InvalidArgumentsError, type ToolContext, type ToolResult } from "@capgate/tools";
import { workspacePathPolicy } from "@capgate/workspace";
import { manifest } from "./manifest.js";
import { captureScreen, defaultScreenshotPath } from "./screenshot.js";
import {
  checkPoint,
  cuaFailure,
  describeScreen,
  openScreen,
  type Point,
  parseMouseLocation,
  reportFailures,
  runFailure,
  runX11,
  type Screen,
} from "./x11.js";

/** X core pointer buttons: 1 left, 2 middle, 3 right; wheel 4 up, 5 down, 6 left, 7 right. */
const BUTTONS = { left: "1", middle: "2", right: "3" } as const;
const WHEEL = { up: "4", down: "5", left: "6", right: "7" } as const;

/**
 * Same rule as the manifest's `keys` pattern. The schema already refuses anything else; the
 * handler checks again so that a direct call (bypassing the executor) cannot pass an
 * option such as `--window` or anything else to xdotool.
 */
const KEYS_PATTERN = /^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*( [A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*)*$/;

/** Milliseconds between typed characters (xdotool's default is 12; this keeps long text fast). */
const TYPE_DELAY_MS = 6;
/** Milliseconds between wheel steps. */
const SCROLL_DELAY_MS = 20;

/**
 * Run xdotool with a command chain ending in `getmouselocation`; return where the pointer is.
 * The chain runs on one X connection, so the server handles the move (and click) before it
 * answers the location query. `mousemove --sync` is not used: xdotool 3.20160805 (Debian 12)
 * waits forever when the pointer is already at the target.
 */
async function pointerAfter(ctx: ToolContext, what: string, args: string[]): Promise<Point> {
  const result = await runX11(ctx, "xdotool", [...args, "getmouselocation"]);
  if (result.exitCode !== 0) throw runFailure(what, result);
  const location = parseMouseLocation(result.stdout);
  if (!location) {
    throw cuaFailure(
      "x11_failed",
      `${what}: xdotool did not report the pointer position (printed ${JSON.stringify(result.stdout.slice(0, 80))}).`,
    );
  }
  return location;
}

function at(p: Point): string {
  return `(${p.x}, ${p.y})`;
}

function screenData(screen: Screen) {
  return { display: screen.display, width: screen.width, height: screen.height };
}

/** The typed text as the summary quotes it: JSON-escaped, at most 60 characters. */
function preview(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

/** cua.*: real X11 screenshots, mouse and keyboard on the context's $DISPLAY. */
export const capability = defineCapability({
  manifest,
  policies: {
    screenshot: workspacePathPolicy("path", { forWrite: true }),
    scroll: (args) => {
      if (!args.dx && !args.dy) {
        throw new InvalidArgumentsError(
          "cua.scroll needs a non-zero `dy` (wheel steps down, negative up) or `dx` (right, negative left).",
          { property: "dy" },
        );
      }
      return undefined;
    },
  },
  handlers: {
    screenshot: (args, ctx) =>
      reportFailures(async (): Promise<ToolResult> => {
        const screen = await openScreen(ctx);
        const saved = await captureScreen(ctx, screen, args.path ?? defaultScreenshotPath());
        const summary = `Saved a ${saved.width}×${saved.height} PNG screenshot of DISPLAY=${screen.display} to ${saved.path} (${saved.bytes} bytes). cua.click and cua.move take x and y in these pixels.`;
        const png = await readFile(saved.absolutePath);
        return {
          success: true,
          summary,
          // The picture itself too, so an MCP client (or a model that reads images) sees it.
          content: [
            { type: "text", text: summary },
            { type: "image", data: png.toString("base64"), mimeType: "image/png" },
          ],
          data: { ...saved, screen: screenData(screen) },
        };
      }),

    click: (args, ctx) =>
      reportFailures(async (): Promise<ToolResult> => {
        const screen = await openScreen(ctx);
        const target = { x: args.x, y: args.y };
        checkPoint(screen, target);
        const button = args.button ?? "left";
        const pointer = await pointerAfter(ctx, `clicking ${button} at ${at(target)}`, [
          "mousemove",
          String(target.x),
          String(target.y),
          "click",
          // xdotool sleeps `--delay` (100 ms) after every click, even a single one.
          "--delay",
          "0",
          BUTTONS[button],
        ]);
        return {
          success: true,
          summary: `Clicked the ${button} button at ${at(target)} on the ${describeScreen(screen)}; the pointer is now at ${at(pointer)}.`,
          data: { button, x: target.x, y: target.y, pointer, screen: screenData(screen) },
        };
      }),

    type: (args, ctx) =>
      reportFailures(async (): Promise<ToolResult> => {
        if (args.text.includes("\0")) {
          // No keysym exists for it, and a process argument cannot carry it.
          throw new InvalidArgumentsError("text contains a NUL character, which cannot be typed.", {
            property: "text",
          });
        }
        const screen = await openScreen(ctx);
        // `--` ends xdotool's options, so text such as "--help" is typed, not parsed.
        const result = await runX11(ctx, "xdotool", [
          "type",
          "--delay",
          String(TYPE_DELAY_MS),
          "--",
          args.text,
        ]);
        if (result.exitCode !== 0) throw runFailure("xdotool type", result);
        const chars = [...args.text].length;
        return {
          success: true,
          summary: `Typed ${chars} character${chars === 1 ? "" : "s"} (${preview(args.text)}) into the focused window on DISPLAY=${screen.display}.`,
          data: { characters: chars, screen: screenData(screen) },
        };
      }),

    key: (args, ctx) =>
      reportFailures(async (): Promise<ToolResult> => {
        if (typeof args.keys !== "string" || !KEYS_PATTERN.test(args.keys)) {
          throw new InvalidArgumentsError(
            `keys ${JSON.stringify(args.keys)} must be X keysym names joined with '+' and separated by single spaces, e.g. 'Return' or 'ctrl+s'.`,
            { property: "keys" },
          );
        }
        const screen = await openScreen(ctx);
        const combos = args.keys.split(" ");
        const result = await runX11(ctx, "xdotool", ["key", "--", ...combos]);
        if (result.exitCode !== 0) throw runFailure("xdotool key", result);
        // xdotool skips names it does not know (and presses the rest); say so instead of claiming success.
        const unknown = [...result.stderr.matchAll(/No such key name '([^']*)'/g)].map((m) => m[1]!);
        if (unknown.length > 0) {
          const names = [...new Set(unknown)].map((n) => `'${n}'`).join(", ");
          const rest = combos.length > 1 ? " The other keys in the sequence were pressed." : "";
          throw cuaFailure(
            "unknown_key",
            `Unknown key name ${names}: not an X keysym, so it was not pressed.${rest} Use names such as Return, Tab, Escape, BackSpace, Up, F5, ctrl+s.`,
          );
        }
        return {
          success: true,
          summary: `Pressed ${combos.join(", then ")} in the focused window on DISPLAY=${screen.display}.`,
          data: { keys: combos, screen: screenData(screen) },
        };
      }),

    scroll: (args, ctx) =>
      reportFailures(async (): Promise<ToolResult> => {
        const screen = await openScreen(ctx);
        const dx = args.dx ?? 0;
        const dy = args.dy ?? 0;
        const chain: string[] = [];
        const steps: string[] = [];
        const wheel = (count: number, button: string, name: string) => {
          if (count === 0) return;
          const n = Math.abs(count);
          chain.push("click", "--repeat", String(n), "--delay", String(SCROLL_DELAY_MS), button);
          steps.push(`${name} ${n} step${n === 1 ? "" : "s"}`);
        };
        wheel(dy, dy > 0 ? WHEEL.down : WHEEL.up, dy > 0 ? "down" : "up");
        wheel(dx, dx > 0 ? WHEEL.right : WHEEL.left, dx > 0 ? "right" : "left");
        const pointer = await pointerAfter(ctx, "scrolling", chain);
        return {
          success: true,
          summary: `Scrolled ${steps.join(" and ")} under the pointer at ${at(pointer)} on the ${describeScreen(screen)}.`,
          data: { dx, dy, pointer, screen: screenData(screen) },
        };
      }),

    move: (args, ctx) =>
      reportFailures(async (): Promise<ToolResult> => {
        const screen = await openScreen(ctx);
        const target = { x: args.x, y: args.y };
        checkPoint(screen, target);
        const pointer = await pointerAfter(ctx, `moving the pointer to ${at(target)}`, [
          "mousemove",
          String(target.x),
          String(target.y),
        ]);
        return {
          success: true,
          summary: `Moved the pointer to ${at(pointer)} on the ${describeScreen(screen)}.`,
          data: { x: target.x, y: target.y, pointer, screen: screenData(screen) },
        };
      }),
  },
});
