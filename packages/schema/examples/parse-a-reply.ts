import { parseToolAction, signatureFromSchema, topLevelTools, validate } from "@capgate/schema";

// What the model sees: eight one-line signatures.
for (const tool of topLevelTools()) console.log(signatureFromSchema(tool.name, tool.inputSchema));

// What the model sends back, checked strictly.
const reply = '```json\n{"name": "capability_search", "arguments": {"q": "read files"}}\n```';
const parsed = parseToolAction(reply);
if (!parsed.ok) {
  // invalid_arguments at arguments.q: … unexpected property `q`; did you mean `query`? …
  console.log(`${parsed.error.code} at ${parsed.error.property}: ${parsed.error.message}`);
}

// Any JSON Schema (draft 2020-12 or draft-07), compiled once per distinct schema.
const result = validate(
  { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  { n: "1" },
);
console.log(result); // { ok: false, errors: [{ property: "n", message: "must be integer, got string" }] }
