export type { SemanticRankerOptions } from "./semantic-ranker.js";
export { createSemanticRanker } from "./semantic-ranker.js";
export type { VectorTable } from "./vector-table.js";
export { parseVectorTable } from "./vector-table.js";
