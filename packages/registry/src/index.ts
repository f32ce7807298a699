export { analyze, isStopWord, STEM_PREFIX_LENGTH, stem, tokenize } from "./analyze.js";
export { DuplicateCapabilityError, InvalidManifestError, InvalidMcpServerError } from "./errors.js";
export type { McpRegistration, McpServerOptions, McpSkippedTool, McpToolInfo } from "./mcp.js";
export {
  MAX_MCP_DESCRIPTION,
  MCP_SERVER_NAME_PATTERN,
  MCP_TOOL_NAME_PATTERN,
  mcpCapabilityName,
  mcpManifest,
  mcpServerOf,
  sanitizeMcpDescription,
} from "./mcp.js";
export type { RankerDocument, RankerIndex, RankerQuery, RankerQueryOptions, SearchRanker } from "./ranker.js";
export type { RegistryOptions, SearchHit, SearchHitTool, SearchOptions, SearchWeights } from "./registry.js";
export { DEFAULT_SEARCH_WEIGHTS, Registry } from "./registry.js";
export type { FieldExtractor, TextHit, TextIndex, TextIndexOptions, TextQuery } from "./text-index.js";
export { createTextIndex } from "./text-index.js";
export { topIndices } from "./top-k.js";
export type { ManifestProblem, ManifestValidation } from "./validate-manifest.js";
export {
  CAPABILITY_NAME_PATTERN,
  formatProblems,
  MAX_TOOL_NAME_LENGTH,
  MCP_NAMESPACE,
  TOOL_VERB_PATTERN,
  validateManifest,
} from "./validate-manifest.js";
