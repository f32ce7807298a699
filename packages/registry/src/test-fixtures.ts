import type { CapabilityManifest, JsonSchema } from "@capgate/schema";

/** A closed object schema with string properties, the first `required` of them required. */
export function closed(props: string[], required = props.length): JsonSchema {
  return {
    type: "object",
    additionalProperties: false,
    properties: Object.fromEntries(props.map((p) => [p, { type: "string" }])),
    required: props.slice(0, required),
  };
}

export function manifest(
  name: string,
  description: string,
  tools: Array<[verb: string, description: string, props?: string[]]>,
  profileFit: string[] = [],
): CapabilityManifest {
  return {
    name,
    version: "1.0.0",
    description,
    profileFit,
    tools: tools.map(([verb, desc, props = ["path"]]) => ({
      name: `${name}.${verb}`,
      description: desc,
      inputSchema: closed(props),
    })),
  };
}
