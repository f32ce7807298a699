export { analyze, isStopWord, tokenize } from "./analyze.js";
export { DuplicateCapabilityError, InvalidManifestError, InvalidMcpServerError } from "./errors.js";
export type { McpRegistration, McpServerOptions, McpSkippedTool, McpToolInfo } from "./mcp.js";
export { mcpCapabilityName, mcpManifest } from "./mcp.js";
export type { RankerDocument, RankerIndex, RankerQuery, RankerQueryOptions, SearchRanker } from "./ranker.js";
export type { RegistryOptions, SearchHit, SearchHitTool, SearchOptions, SearchWeights } from "./registry.js";
export { Registry, SIBLING_TOOLS } from "./registry.js";
export { OPERATION_SYNONYMS } from "./synonyms.js";
export type {
  FieldExtractor,
  TextHit,
  TextIndex,
  TextIndexOptions,
  TextQuery,
  TextScores,
} from "./text-index.js";
export { createTextIndex } from "./text-index.js";
export { topIndices } from "./top-k.js";
export type { ManifestProblem, ManifestValidation, ValidateManifestOptions } from "./validate-manifest.js";
export { validateManifest } from "./validate-manifest.js";
