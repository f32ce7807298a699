import type { ToolManifest } from "@capgate/schema";
import { tokenize } from "./analyze.js";

/** Whether a request asks to look at something or to change it; whether a tool only reads. */
export type Effect = "read" | "change";

/**
 * Imperative verbs that open a request to change something (create, update, delete, start,
 * send, and the state changes APIs expose: assign, acknowledge, resolve, archive, …), and
 * words that open a request to look (show, list, what, which, …; not "how" or "where", which
 * open "how do I create…" as often as "how many…"; nor "run" or "execute", which read as often
 * as they change: "run an aggregation", "execute this query"). Field-general
 * English, not any data set's words: a request opening with one of them says which kind of
 * tool it wants, whatever the tool's nouns.
 */
const CHANGE_VERBS = new Set([
  "create",
  "add",
  "make",
  "insert",
  "new",
  "update",
  "edit",
  "modify",
  "change",
  "set",
  "rename",
  "patch",
  "delete",
  "remove",
  "drop",
  "erase",
  "destroy",
  "start",
  "kill",
  "trigger",
  "launch",
  "stop",
  "halt",
  "terminate",
  "cancel",
  "send",
  "post",
  "write",
  "assign",
  "reassign",
  "unassign",
  "acknowledge",
  "resolve",
  "close",
  "reopen",
  "archive",
  "enable",
  "disable",
  "book",
  "reserve",
  "upload",
  "install",
  "uninstall",
  "merge",
  "push",
  "deploy",
  "restart",
  "approve",
  "reject",
  "invite",
  "publish",
  "snooze",
  "escalate",
  "move",
  "copy",
]);

const LOOK_VERBS = new Set([
  "show",
  "list",
  "get",
  "find",
  "search",
  "look",
  "view",
  "display",
  "read",
  "fetch",
  "retrieve",
  "what",
  "which",
  "who",
  "tell",
  "describe",
  "count",
]);

/** Words a request may open with before its verb ("please", "can you", "I'd like to", "let's"), as tokenized. */
const LEADING_FILLER = new Set([
  "please",
  "kindly",
  "can",
  "could",
  "would",
  "will",
  "you",
  "i",
  "d",
  "s",
  "want",
  "need",
  "like",
  "to",
  "me",
  "help",
  "let",
  "lets",
  "us",
  "go",
  "ahead",
  "and",
  "now",
  "just",
]);

/**
 * What a request asks for by its opening verb (after leading filler): `change` for an
 * imperative that changes something, `read` for one that asks to look, undefined otherwise
 * (a noun phrase, a verb of neither list, an empty request).
 */
export function requestEffect(text: string): Effect | undefined {
  for (const word of tokenize(text).slice(0, 6)) {
    if (CHANGE_VERBS.has(word)) return "change";
    if (LOOK_VERBS.has(word)) return "read";
    if (!LEADING_FILLER.has(word)) return undefined;
  }
  return undefined;
}

/**
 * Whether a tool only reads, by what its author said: an MCP tool's `readOnlyHint`
 * annotation (true or false; absent says nothing, whatever risk capgate assumes for
 * approval), a manifest's own `risk` otherwise (`read` and `network` read; `write` and
 * `exec` change). Undefined when neither says.
 */
export function toolEffect(tool: ToolManifest, fromMcp: boolean): Effect | undefined {
  if (fromMcp) {
    const hint = tool.annotations?.readOnlyHint;
    return hint === true ? "read" : hint === false ? "change" : undefined;
  }
  if (tool.risk === undefined) return undefined;
  return tool.risk === "read" || tool.risk === "network" ? "read" : "change";
}
