/** A JSON Schema object as capgate reads it: draft 2020-12 or draft-07. */
export interface JsonSchema {
  $schema?: string;
  $id?: string;
  type?: JsonSchemaType | JsonSchemaType[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema | JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  [keyword: string]: unknown;
}

export type JsonSchemaType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";
