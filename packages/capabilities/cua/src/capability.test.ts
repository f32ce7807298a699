import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needs } from "@capgate/test-system-parts";
import {
  CapabilitySet,
  createHostResources,
  DEFAULT_LIMITS,
  type ExecuteContext,
  executeTool,
  type ToolResult,
} from "@capgate/tools";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { capability } from "./capability.js";
import { example } from "./examples/readme-example.js";
import { pngSize } from "./screenshot.js";
import {
  type Browser,
  type EventPage,
  startChromium,
  startEventPage,
  startXvfb,
  unusedDisplay,
  type XServer,
} from "./test-support/x-session.js";

const X = needs(["xvfb", "xdotool", "imagemagick"]);
const CHROMIUM = needs(["chromium"]);

const NO_DISPLAY =
  "no X display: DISPLAY is not set — cua needs a desktop session; use browser_panel for web pages.";

const workspaces: string[] = [];
function workspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "capgate-cua-")));
  workspaces.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
});

function context(env: Record<string, string | undefined>, ws = workspace()): ExecuteContext {
  return {
    workspace: ws,
    signal: new AbortController().signal,
    env,
    profile: { name: "ComputerOperator", maySpawnWorkers: false },
    limits: { ...DEFAULT_LIMITS, timeoutMs: 30_000 },
    policy: {},
    services: {},
    resources: createHostResources(),
    stateDir: workspace(),
    capabilities: new CapabilitySet([capability]),
    loaded: { isToolLoaded: () => true },
  };
}

const baseEnv = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, LANG: "C.UTF-8" });

async function rejection(
  call: Promise<ToolResult>,
): Promise<{ code: string; property?: string; message: string }> {
  try {
    await call;
  } catch (error) {
    return error as { code: string; property?: string; message: string };
  }
  throw new Error("expected the call to be rejected");
}

const ALL_CALLS: [string, Record<string, unknown>][] = [
  ["cua.screenshot", {}],
  ["cua.click", { x: 1, y: 1 }],
  ["cua.type", { text: "hi" }],
  ["cua.key", { keys: "Return" }],
  ["cua.scroll", { dy: 1 }],
  ["cua.move", { x: 1, y: 1 }],
];

describe("cua without a display", () => {
  it.each(ALL_CALLS)("%s fails saying DISPLAY is not set", async (tool, args) => {
    const ctx = context(baseEnv());
    const result = await executeTool(tool, args, ctx);
    expect(result).toEqual({ success: false, summary: NO_DISPLAY, data: { code: "no_display" } });
    expect(existsSync(join(ctx.workspace, ".capgate"))).toBe(false);
  });
});

describe.skipIf(X.skip)(`cua on a real X server (Xvfb)${X.note}`, () => {
  let x: XServer;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    x = await startXvfb(1024, 768);
    env = { ...baseEnv(), DISPLAY: x.display };
  }, 30_000);
  afterAll(async () => {
    await x?.stop();
  });

  const pointer = () => {
    const out = execFileSync("xdotool", ["getmouselocation"], {
      env: { ...process.env, DISPLAY: x.display },
    });
    const m = /x:(\d+) y:(\d+)/.exec(out.toString())!;
    return { x: Number(m[1]), y: Number(m[2]) };
  };

  it("fails clearly when the X server of DISPLAY is unreachable", async () => {
    const display = unusedDisplay();
    for (const [tool, args] of ALL_CALLS) {
      const result = await executeTool(tool, args, context({ ...baseEnv(), DISPLAY: display }));
      expect(result.success, tool).toBe(false);
      expect(result.summary, tool).toContain(
        `no X display: the X server of DISPLAY=${display} is not reachable`,
      );
      expect(result.summary, tool).toContain("use browser_panel for web pages");
    }
  });

  it("names the Debian package when xdotool or ImageMagick is missing", async () => {
    const empty = workspace();
    const noTools = await executeTool(
      "cua.move",
      { x: 1, y: 1 },
      context({ DISPLAY: x.display, PATH: empty }),
    );
    expect(noTools.success).toBe(false);
    expect(noTools.summary).toContain("install the Debian package 'xdotool'");
    expect(noTools.data).toEqual({ code: "missing_program" });

    // xdotool present, ImageMagick's import not: only the screenshot needs it.
    const bin = workspace();
    const xdotool = execFileSync("sh", ["-c", "command -v xdotool"]).toString().trim();
    symlinkSync(xdotool, join(bin, "xdotool"));
    const shot = await executeTool("cua.screenshot", {}, context({ DISPLAY: x.display, PATH: bin }));
    expect(shot.success).toBe(false);
    expect(shot.summary).toContain("install the Debian package 'imagemagick'");
    expect(
      (await executeTool("cua.move", { x: 2, y: 2 }, context({ DISPLAY: x.display, PATH: bin }))).success,
    ).toBe(true);
  });

  it("moves the pointer, and xdotool getmouselocation agrees", async () => {
    const result = await executeTool("cua.move", { x: 123, y: 456 }, context(env));
    expect(result.success).toBe(true);
    expect(result.summary).toBe(
      `Moved the pointer to (123, 456) on the 1024×768 screen of DISPLAY=${x.display}.`,
    );
    expect(result.data).toMatchObject({ pointer: { x: 123, y: 456 }, screen: { width: 1024, height: 768 } });
    expect(pointer()).toEqual({ x: 123, y: 456 });
    await executeTool("cua.move", { x: 1023, y: 767 }, context(env));
    expect(pointer()).toEqual({ x: 1023, y: 767 });
  });

  it("moves and clicks where the pointer already is (no wait for a move that never comes)", async () => {
    // A short limit: a handler waiting for the pointer to move would time out and fail here.
    const ctx = { ...context(env), limits: { ...DEFAULT_LIMITS, timeoutMs: 5_000 } };
    for (let i = 0; i < 2; i++) {
      expect((await executeTool("cua.move", { x: 300, y: 300 }, ctx)).summary).toContain("(300, 300)");
      expect((await executeTool("cua.click", { x: 300, y: 300 }, ctx)).success).toBe(true);
    }
    expect(pointer()).toEqual({ x: 300, y: 300 });
  }, 30_000);

  it("refuses coordinates outside the screen and moves nothing", async () => {
    await executeTool("cua.move", { x: 10, y: 10 }, context(env));
    for (const [tool, args] of [
      ["cua.click", { x: 1024, y: 5 }],
      ["cua.move", { x: 5, y: 768 }],
      ["cua.click", { x: 5000, y: 9000, button: "right" }],
    ] as const) {
      const result = await executeTool(tool, args, context(env));
      expect(result.success, tool).toBe(false);
      expect(result.summary, tool).toContain("is outside the 1024×768 screen");
      expect(result.summary, tool).toContain("x must be 0–1023 and y 0–767");
      expect(result.data).toEqual({ code: "out_of_range" });
    }
    expect(pointer()).toEqual({ x: 10, y: 10 });
    // Negative and fractional values never reach the handler: the schema rejects them.
    const negative = await rejection(executeTool("cua.move", { x: -1, y: 0 }, context(env)));
    expect(negative).toMatchObject({ code: "invalid_arguments", property: "x" });
  });

  it("saves a PNG of the screen size inside the workspace (default under .capgate/screenshots/)", async () => {
    const ctx = context(env);
    const result = await executeTool("cua.screenshot", {}, ctx);
    expect(result.success).toBe(true);
    const data = result.data as {
      path: string;
      absolutePath: string;
      width: number;
      height: number;
      bytes: number;
    };
    expect(data.path).toMatch(/^\.capgate\/screenshots\/screen-.*\.png$/);
    expect(data.absolutePath).toBe(join(ctx.workspace, data.path));
    const png = readFileSync(data.absolutePath);
    expect(pngSize(png)).toEqual({ width: 1024, height: 768 });
    expect(data.bytes).toBe(png.length);
    // The same picture as MCP image content, byte for byte.
    const image = result.content?.find((c) => c.type === "image");
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(Buffer.from((image as { data: string }).data, "base64").equals(png)).toBe(true);
    expect(result.summary).toContain(
      `Saved a 1024×768 PNG screenshot of DISPLAY=${x.display} to ${data.path}`,
    );

    const named = await executeTool("cua.screenshot", { path: "shots/deep/desk.png" }, ctx);
    expect(named.success).toBe(true);
    expect(pngSize(readFileSync(join(ctx.workspace, "shots/deep/desk.png")))).toEqual({
      width: 1024,
      height: 768,
    });
  });

  it("confines the screenshot path to the workspace and never writes through a symlink", async () => {
    const ctx = context(env);
    const outside = workspace();
    const climb = await rejection(executeTool("cua.screenshot", { path: "../escape.png" }, ctx));
    expect(climb).toMatchObject({ code: "policy_denied", property: "path" });
    const absolute = await rejection(executeTool("cua.screenshot", { path: join(outside, "x.png") }, ctx));
    expect(absolute.code).toBe("policy_denied");
    symlinkSync(join(outside, "target.png"), join(ctx.workspace, "link.png"));
    const link = await rejection(executeTool("cua.screenshot", { path: "link.png" }, ctx));
    expect(link).toMatchObject({ code: "policy_denied", property: "path" });
    mkdirSync(join(outside, "dir"));
    symlinkSync(join(outside, "dir"), join(ctx.workspace, "out"));
    const viaDir = await rejection(executeTool("cua.screenshot", { path: "out/x.png" }, ctx));
    expect(viaDir.code).toBe("policy_denied");
    expect(existsSync(join(outside, "target.png"))).toBe(false);
    expect(existsSync(join(outside, "dir", "x.png"))).toBe(false);
    expect(existsSync(join(outside, "escape.png"))).toBe(false);
  });

  it("never runs key names or text as shell code", async () => {
    const ctx = context(env);
    const marker = join(ctx.workspace, "pwned");
    for (const keys of [
      `Return; touch ${marker}`,
      `$(touch ${marker})`,
      `\`touch ${marker}\``,
      `a && touch ${marker}`,
      "--window 1 Return",
      "ctrl+c | sh",
    ]) {
      const error = await rejection(executeTool("cua.key", { keys }, ctx));
      expect(error, keys).toMatchObject({ code: "invalid_arguments", property: "keys" });
      // Called directly, bypassing the executor's schema check, the handler refuses it too.
      const direct = capability.handlers.get("cua.key")!({ keys }, ctx);
      await expect(direct, keys).rejects.toMatchObject({ code: "invalid_arguments", property: "keys" });
    }
    // Text is typed as keystrokes, never interpreted.
    const typed = await executeTool("cua.type", { text: `$(touch ${marker}) --help` }, ctx);
    expect(typed.success).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses text with a NUL character", async () => {
    const error = await rejection(executeTool("cua.type", { text: "a\0b" }, context(env)));
    expect(error).toMatchObject({ code: "invalid_arguments", property: "text" });
  });

  it("reports key names that are not X keysyms", async () => {
    const result = await executeTool("cua.key", { keys: "NoSuchKeyName" }, context(env));
    expect(result.success).toBe(false);
    expect(result.summary).toContain("Unknown key name 'NoSuchKeyName'");
    expect(result.data).toEqual({ code: "unknown_key" });
  });

  it("runs the README example as written", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const results = await example(workspace(), x.display);
      expect(results.map((r) => [r.success, r.summary])).toEqual(results.map((r) => [true, r.summary]));
      expect(results[0]!.summary).toMatch(/^Saved a 1024×768 PNG screenshot/);
    } finally {
      log.mockRestore();
    }
  }, 30_000);

  it("asks for a direction when scroll gets none", async () => {
    const error = await rejection(executeTool("cua.scroll", { dx: 0 }, context(env)));
    expect(error).toMatchObject({ code: "invalid_arguments", property: "dy" });
  });

  describe.skipIf(CHROMIUM.skip)(`input lands in a real window (headed Chromium)${CHROMIUM.note}`, () => {
    let page: EventPage;
    let browser: Browser;
    let ctx: ExecuteContext;
    /** Screen position of the page's (0, 0), measured from a real mouse event. */
    let origin: { x: number; y: number };
    let layout: { button: Rect; field: Rect };
    interface Rect {
      x: number;
      y: number;
      width: number;
      height: number;
    }
    const centre = (r: Rect) => ({
      x: Math.round(origin.x + r.x + r.width / 2),
      y: Math.round(origin.y + r.y + r.height / 2),
    });

    beforeAll(async () => {
      ctx = context(env);
      page = await startEventPage();
      browser = startChromium(x.display, page.url);
      const ready = await page.next((e) => e.type === "ready", 0, "the page to load in Chromium");
      layout = ready as unknown as typeof layout;
      // Give the window a moment to be mapped, then learn where the page sits on the screen.
      let move: { screenX: number; screenY: number; clientX: number; clientY: number } | undefined;
      for (let i = 0; i < 20 && !move; i++) {
        const from = page.events.length;
        await executeTool("cua.move", { x: 600 + i, y: 600 }, ctx);
        move = (await page
          .next((e) => e.type === "mousemove", from, "a mousemove")
          .catch(() => undefined)) as typeof move;
      }
      if (!move) throw new Error("Chromium never saw the pointer move");
      origin = { x: move.screenX - move.clientX, y: move.screenY - move.clientY };
    }, 60_000);
    afterAll(async () => {
      await browser?.stop();
      await page?.close();
    });

    it("clicks the button the page shows (left and right)", async () => {
      const at = centre(layout.button);
      let from = page.events.length;
      const result = await executeTool("cua.click", at, ctx);
      expect(result.success).toBe(true);
      expect(result.summary).toContain(`Clicked the left button at (${at.x}, ${at.y})`);
      expect(await page.next((e) => e.type === "click", from, "the button click")).toMatchObject({
        target: "button",
        button: 0,
      });

      from = page.events.length;
      await executeTool("cua.click", { ...at, button: "right" }, ctx);
      expect(await page.next((e) => e.type === "contextmenu", from, "the right click")).toMatchObject({
        button: 2,
      });
    }, 30_000);

    it("types text into the focused field and presses keys", async () => {
      let from = page.events.length;
      await executeTool("cua.click", centre(layout.field), ctx);
      await page.next((e) => e.type === "focus", from, "the field to take focus");

      const text = "Hello --help $(id) 'quoted' ~/x";
      const typed = await executeTool("cua.type", { text }, ctx);
      expect(typed.success).toBe(true);
      expect(typed.summary).toContain(`Typed ${text.length} characters`);
      from = page.events.length;
      const pressed = await executeTool("cua.key", { keys: "Return" }, ctx);
      expect(pressed.summary).toContain("Pressed Return");
      expect(await page.next((e) => e.type === "keydown" && e.key === "Enter", from, "Enter")).toMatchObject({
        value: text,
      });

      // A combination and a sequence: select all, delete, then Enter shows an empty field.
      from = page.events.length;
      const combo = await executeTool("cua.key", { keys: "ctrl+a BackSpace Return" }, ctx);
      expect(combo.success).toBe(true);
      expect(await page.next((e) => e.type === "keydown" && e.key === "Enter", from, "Enter")).toMatchObject({
        value: "",
      });
    }, 30_000);

    it("types long mixed text without dropping or reordering characters", async () => {
      const text = Array.from(
        { length: 4 },
        (_, i) => `Line ${i}: The QUICK brown fox (#${i * 7}) jumps over [lazy] dogs; 100% {ok}! `,
      ).join("");
      let from = page.events.length;
      await executeTool("cua.click", centre(layout.field), ctx);
      await executeTool("cua.key", { keys: "ctrl+a BackSpace" }, ctx);
      const typed = await executeTool("cua.type", { text }, ctx);
      expect(typed.success).toBe(true);
      from = page.events.length;
      await executeTool("cua.key", { keys: "Return" }, ctx);
      const enter = await page.next((e) => e.type === "keydown" && e.key === "Enter", from, "Enter");
      expect(enter.value).toBe(text);
    }, 60_000);

    it("scrolls the page under the pointer, down and back up", async () => {
      await executeTool("cua.move", { x: origin.x + 700, y: origin.y + 500 }, ctx);
      let from = page.events.length;
      const down = await executeTool("cua.scroll", { dy: 3 }, ctx);
      expect(down.success).toBe(true);
      expect(down.summary).toContain("Scrolled down 3 steps");
      expect(await page.next((e) => e.type === "wheel", from, "a wheel event")).toMatchObject({
        deltaY: expect.any(Number),
      });
      const scrolled = await page.next(
        (e) => e.type === "scroll" && (e.scrollY as number) > 0,
        from,
        "the page to scroll",
      );
      expect(scrolled.scrollY).toBeGreaterThan(0);
      expect(
        page.events
          .slice(from)
          .filter((e) => e.type === "wheel")
          .every((e) => (e.deltaY as number) > 0),
      ).toBe(true);

      // Events of the first scroll may still be arriving: the up-wheel is told apart by its sign.
      from = page.events.length;
      const up = await executeTool("cua.scroll", { dy: -3 }, ctx);
      expect(up.summary).toContain("Scrolled up 3 steps");
      await page.next((e) => e.type === "wheel" && (e.deltaY as number) < 0, from, "a wheel event up");
    }, 30_000);

    it("captures the window in the screenshot", async () => {
      const result = await executeTool("cua.screenshot", { path: "page.png" }, ctx);
      expect(result.success).toBe(true);
      expect(pngSize(readFileSync(join(ctx.workspace, "page.png")))).toEqual({ width: 1024, height: 768 });
    }, 30_000);
  });
});
