import { describe, expect, it } from "vitest";
import { builtinCapabilities } from "./builtins.js";
import { createDefaultRegistry } from "./default-registry.js";

/**
 * Everyday requests, each with the built-in capability a user means, ranked by the default
 * registry (what the CLI, the server and `mcp serve` search with). Written from what a user
 * wants, not from the capabilities' descriptions: held-out users phrase things their own way.
 */
const PHRASINGS: Record<string, string[]> = {
  fs: [
    "rename a file",
    "delete the old log file",
    "make a new directory called build",
    "find files that mention TODO",
  ],
  shell: [
    "run the test suite",
    "start the dev server in the background",
    "execute npm install",
    "stop the process I started earlier",
    "what did the build command print",
  ],
  git: [
    "undo my local edits to a file",
    "who changed what in the last commits",
    "stage my changes and commit them",
    "switch to another branch",
    "throw away uncommitted changes",
  ],
  web: [
    "download the html of a url",
    "call a REST API with a POST request",
    "get the text of an article online",
    "send json to an http endpoint",
  ],
  browser_panel: [
    "a page that only renders with JavaScript",
    "fill in a login form on a website",
    "click a button on a web page",
    "a single page app that needs scripts to show its content",
  ],
  cua: [
    "control a desktop application that has no API",
    "click at a position on the screen",
    "press keyboard shortcuts in a native app",
    "type into a GUI program",
    "move the mouse pointer",
  ],
  mcp: [
    "use a tool from an MCP server",
    "list the tools a model context protocol server offers",
    "call a tool on an external server over stdio",
  ],
  workers: [
    "delegate a subtask to a helper agent",
    "run several tasks in parallel with sub-agents",
    "wait for a background agent to finish",
    "cancel a running worker",
  ],
  memory: [
    "remember this for later",
    "forget what I told you earlier",
    "save a note for future runs",
    "show what you have remembered",
  ],
  code: ["run a python snippet", "evaluate some javascript", "calculate a value with a short python program"],
};

/**
 * Still ranked wrong, kept here so a fix shows up (the test then fails and the phrasing moves
 * up): `browser_panel.open`'s name outweighs the file name for "open"; `fs.stat`'s
 * modification time and the many file tools outweigh git's history for "changed … file";
 * the script capability's name outweighs code's description for "a quick script".
 */
const STILL_MISSED: Array<[string, string]> = [
  ["open the contents of config.yaml", "fs"],
  ["what changed in this file over time", "git"],
  // "script" is the name of the code-mode capability (built in since it landed), and a name
  // outweighs code's description; both are offered in the top two.
  ["compute something with a quick script", "code"],
];

describe("everyday phrasings find the built-in capability first (default registry)", () => {
  const registry = createDefaultRegistry();
  for (const c of builtinCapabilities()) registry.register(c.manifest);
  for (const [capability, phrasings] of Object.entries(PHRASINGS)) {
    it(capability, () => {
      const firsts = phrasings.map((q) => [q, registry.search(q)[0]?.capability]);
      expect(firsts).toEqual(phrasings.map((q) => [q, capability]));
    });
  }
  for (const [q, capability] of STILL_MISSED) {
    it.fails(`still missed: "${q}" → ${capability}`, () => {
      expect(registry.search(q)[0]?.capability).toBe(capability);
    });
  }
});
