import { Registry } from "@capgate/registry";
import { createSemanticRanker } from "@capgate/search-semantic";

/**
 * An empty registry configured exactly as the CLI, the server and `capgate mcp serve`
 * configure theirs: lexical ranking blended with the offline semantic ranker
 * (`@capgate/search-semantic`). No capability is registered, so an outside evaluation can
 * register its own manifests and measure what users get.
 */
export function createDefaultRegistry(): Registry {
  return new Registry({ ranker: createSemanticRanker() });
}
