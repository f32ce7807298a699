// @joplin/turndown-plugin-gfm ships no types; this is the part we use.
declare module "@joplin/turndown-plugin-gfm" {
  import type TurndownService from "turndown";

  type Plugin = (service: TurndownService) => void;
  /** Tables, strikethrough, task lists and highlighted code blocks. */
  export const gfm: Plugin;
  export const tables: Plugin;
  export const strikethrough: Plugin;
  export const taskListItems: Plugin;
}
