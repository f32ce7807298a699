export type { CapgateErrorOptions } from "@capgate/errors";
export { CapgateError } from "@capgate/errors";
export type { ApprovalTextRequest } from "./approval-text.js";
export { APPROVAL_TEXT_CHARS, approvalText, visibleText } from "./approval-text.js";
export type { ContentAnnotations, ContentBlock, ToolResult } from "./content.js";
export { optionalWhereDefaulted } from "./defaulted-required.js";
export type { JsonSchema, JsonSchemaType } from "./json-schema.js";
export type { FittedListing, ListingSection } from "./listing.js";
export { fitListing } from "./listing.js";
export type { CapabilityManifest, ToolManifest, ToolRisk } from "./manifest.js";
export { MANIFEST_FORMAT, mcpCallableToolName, mcpToolRisk, TOOL_RISKS } from "./manifest.js";
export type { AdmittedMcpTool, RefusedMcpTool } from "./mcp-admission.js";
export { admitMcpTools, isAppOnlyMcpTool, MAX_MCP_TOOL_NAME, mcpToolLabel } from "./mcp-admission.js";
export type { ParseError, ParseErrorCode, ParseResult, ToolAction } from "./parse.js";
export { MAX_ACTION_BYTES, MAX_ACTION_DEPTH, PARSE_ERROR_CODES, parseToolAction } from "./parse.js";
export { MAX_TOOL_SCHEMA_CHARS, MAX_TOOL_SCHEMA_DEPTH } from "./schema-checks.js";
export { signatureFromSchema, withSignatures } from "./signature.js";
export { argumentsHash, stableHash, stableStringify } from "./stable-hash.js";
export type { StrictJsonResult } from "./strict-json.js";
export { parseJsonStrict } from "./strict-json.js";
export { closestMatch } from "./suggest.js";
export type { TopLevelToolDefinition, TopLevelToolName } from "./top-level.js";
export {
  isTopLevelToolName,
  TOP_LEVEL_TOOL_NAMES,
  topLevelToolNames,
  topLevelToolSchemas,
  topLevelTools,
} from "./top-level.js";
export type { TruncateResult } from "./truncate.js";
export { truncateBytes, truncateMiddle, truncationMarker } from "./truncate.js";
export type { PrecompiledValidators, ValidationIssue, ValidationResult } from "./validate.js";
export {
  addPrecompiledValidators,
  compiledValidator,
  describeIssues,
  holdsMoreValuesThan,
  sentence,
  validate,
  validatorCacheStats,
} from "./validate.js";
