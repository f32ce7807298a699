export type { Embedder } from "./embed.js";
export { createEmbedder, SIF_A } from "./embed.js";
export type { SemanticRankerOptions } from "./semantic-ranker.js";
export { createSemanticRanker } from "./semantic-ranker.js";
export { createVectorIndex } from "./vector-index.js";
export type { VectorTable } from "./vector-table.js";
export { parseVectorTable, shippedVectorTable } from "./vector-table.js";
