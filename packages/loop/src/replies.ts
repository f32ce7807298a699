import type { SearchHit } from "@capgate/registry";
import {
  type CapabilityManifest,
  fitListing,
  type ListingSection,
  signatureFromSchema,
} from "@capgate/schema";

/**
 * Most characters of a capability_search or capability_load reply, whatever a capability
 * holds (an MCP server may list 10,000 tools): the most relevant tools with their
 * signatures, the count of the others, and how to reach them.
 */
export const REPLY_CHARS = 6_000;

/** Tools listed first in capability_search's reply: the best tool of each of the best capabilities. */
const BEST_TOOLS = 3;

/** How the model finds a tool a reply left out: a narrower search lists it with its signature. */
function findMore(capability: string): string {
  return `capability_search {"query":"${capability} <what the tool does>"} lists the best matches first, with signatures`;
}

/** capability_search's reply: the best tools, then each capability with its tools best first, within `budget`. */
export function searchReply(
  query: string,
  hits: readonly SearchHit[],
  loaded: ReadonlySet<string>,
  budget = REPLY_CHARS,
): string {
  // The best tool of each of the best capabilities first (a hit's tools come best first),
  // so the model can load and call in one go.
  const best = hits
    .filter((h) => h.match !== "substring" && (h.tools[0]?.score ?? 0) > 0)
    .slice(0, BEST_TOOLS)
    .map((h) => `  ${h.tools[0]!.signature} — ${h.tools[0]!.description} [${h.capability}]`);
  const sections: ListingSection[] = [
    {
      head: [
        ...(best.length > 0 ? [`Best tools for "${query}":`, ...best] : []),
        `Capabilities for "${query}" (load one with capability_load, then capability_call its tools):`,
      ],
      items: [],
      more: () => "",
    },
    ...hits.map((h): ListingSection => {
      const state = loaded.has(h.capability) ? " (loaded)" : "";
      const how = h.match === "substring" ? " (matched by substring only)" : "";
      return {
        head: [`${h.capability}${state}${how} — ${h.description}`],
        items: h.tools.map((t) => `  ${t.signature}`),
        more: (omitted) =>
          `  … ${omitted} more of its ${h.tools.length} tools${state ? "" : " (all callable once loaded)"}: ${findMore(h.capability)}`,
      };
    }),
  ];
  return fitListing(sections, { budget }).text;
}

/** The signature of every tool of a manifest: those named in `first` in that order (best first), then the rest by name. */
export function orderedSignatures(manifest: CapabilityManifest, first: readonly string[] = []): string[] {
  const rank = new Map(first.map((name, i) => [name, i]));
  const tools = [...manifest.tools].sort(
    (a, b) =>
      (rank.get(a.name) ?? rank.size) - (rank.get(b.name) ?? rank.size) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  return tools.map((t) => signatureFromSchema(t.name, t.inputSchema));
}

/** capability_load's reply: its tools' signatures (most relevant first), the count of the rest and how to find them, within `budget`. */
export function loadReply(name: string, signatures: readonly string[], budget = REPLY_CHARS): string {
  return fitListing(
    [
      {
        head: [`Loaded ${name}. Call its tools with capability_call:`],
        items: signatures.map((s) => `  ${s}`),
        more: (omitted) =>
          `  … ${omitted} more of its ${signatures.length} tools, all loaded and callable: ${findMore(name)}`,
      },
    ],
    { budget },
  ).text;
}

/** The packet's list of loaded tools within `budget` characters, with the count of the rest. */
export function loadedToolsBlock(signatures: readonly string[], budget: number): string {
  if (signatures.length === 0) return "- (none loaded: use capability_search, then capability_load)";
  return fitListing(
    [
      {
        head: [],
        items: signatures.map((s) => `- ${s}`),
        more: (omitted) =>
          `- … ${omitted} more loaded tools, callable as they are: capability_search {"query":"<what the tool does>"} shows their signatures`,
      },
    ],
    { budget },
  ).text;
}
