import type { ManifestLike } from "@capgate/tools";

const coordinate = (axis: "x" | "y") =>
  ({
    type: "integer",
    minimum: 0,
    maximum: 32767,
    description: `${axis === "x" ? "Horizontal" : "Vertical"} screen position in pixels from the ${axis === "x" ? "left" : "top"} edge, as in cua.screenshot.`,
  }) as const;

/**
 * Computer use: real X11 input and screens on $DISPLAY. The last resort, which is why
 * every description points back to the direct tools.
 */
export const manifest = {
  name: "cua",
  version: "0.1.0",
  manifestFormat: 1,
  description:
    "Computer use for desktop applications with no API or command line: take screenshots of the screen and drive the mouse and keyboard of GUI apps on the X11 display. Use it only when files, shell, browser_panel or APIs cannot do the job.",
  profileFit: ["ComputerOperator"],
  tools: [
    {
      name: "cua.screenshot",
      description:
        "Take a screenshot of the whole screen as a PNG and return its path and size in pixels; click and move coordinates use the same pixels.",
      risk: "read",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          path: {
            type: "string",
            minLength: 5,
            maxLength: 4096,
            pattern: "\\.png$",
            description:
              "Where to save the PNG, relative to the workspace root, ending in .png (default: a new file).",
          },
        },
      },
    },
    {
      name: "cua.click",
      description:
        "Click a button, icon or field at screen position (x, y); left button unless `button` says otherwise.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          x: coordinate("x"),
          y: coordinate("y"),
          button: {
            type: "string",
            enum: ["left", "middle", "right"],
            description: "Mouse button (default 'left').",
          },
        },
        required: ["x", "y"],
      },
    },
    {
      name: "cua.type",
      description:
        "Type text into the focused window as keystrokes. Use cua.key for Enter, Tab and shortcuts like ctrl+s.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          text: { type: "string", minLength: 1, maxLength: 10000, description: "Text to type, as is." },
        },
        required: ["text"],
      },
    },
    {
      name: "cua.key",
      description:
        "Press a key or key combination in the focused window, X keysym names joined with '+': 'Return', 'Escape', 'ctrl+s', 'alt+Tab'; separate several with spaces.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          keys: {
            type: "string",
            minLength: 1,
            maxLength: 200,
            pattern: "^[A-Za-z0-9_]+(\\+[A-Za-z0-9_]+)*( [A-Za-z0-9_]+(\\+[A-Za-z0-9_]+)*)*$",
            description: "Key names such as 'Return', 'BackSpace', 'ctrl+shift+t', 'Down Down Return'.",
          },
        },
        required: ["keys"],
      },
    },
    {
      name: "cua.scroll",
      description:
        "Scroll the window under the mouse pointer by wheel steps: positive `dy` scrolls down, negative up; `dx` scrolls sideways. Move the pointer first with cua.move.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          dx: {
            type: "integer",
            minimum: -100,
            maximum: 100,
            description: "Wheel steps to the right (negative: left); default 0.",
          },
          dy: {
            type: "integer",
            minimum: -100,
            maximum: 100,
            description: "Wheel steps down (negative: up); default 0.",
          },
        },
      },
    },
    {
      name: "cua.move",
      description:
        "Move the mouse pointer to screen position (x, y) without clicking, e.g. to hover or before scrolling.",
      risk: "exec",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: { x: coordinate("x"), y: coordinate("y") },
        required: ["x", "y"],
      },
    },
  ],
} as const satisfies ManifestLike;
