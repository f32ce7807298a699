import type { ElicitRequest } from "@modelcontextprotocol/sdk/types.js";

/** One field of a form-mode elicitation, flattened for a prompt or a web form. */
export interface ElicitationField {
  name: string;
  /** What to show: the schema's title, else the property name. */
  label: string;
  description?: string;
  type: "string" | "number" | "integer" | "boolean";
  required: boolean;
  /** The schema's default; left out of the answer, the client fills it in (SEP-1034). */
  default?: string | number | boolean;
  /** Allowed values (enum / oneOf const), with display names where the schema gives them. */
  choices?: Array<{ value: string; label: string }>;
  /** Multi-select (an array of enum strings). */
  multiple?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
}

type FormParams = Extract<ElicitRequest["params"], { requestedSchema: unknown }>;

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function choicesOf(prop: Record<string, unknown>): Array<{ value: string; label: string }> | undefined {
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return prop.enum.map((v, i) => ({ value: String(v), label: str(names[i]) ?? String(v) }));
  }
  const variants = (
    Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : []
  ) as Array<Record<string, unknown>>;
  if (variants.length > 0 && variants.every((v) => typeof v?.const === "string"))
    return variants.map((v) => ({ value: v.const as string, label: str(v.title) ?? (v.const as string) }));
  return undefined;
}

/** The fields of a form-mode request, in schema order (the schema is flat by the spec). */
export function elicitationFields(params: ElicitRequest["params"]): ElicitationField[] {
  const schema = (params as FormParams).requestedSchema as
    | { properties?: Record<string, Record<string, unknown>>; required?: unknown }
    | undefined;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(schema?.properties ?? {}).map(([name, prop]) => {
    const items = (prop.items ?? {}) as Record<string, unknown>;
    const multiple = prop.type === "array";
    const type = (multiple ? "string" : (prop.type as ElicitationField["type"])) ?? "string";
    const field: ElicitationField = {
      name,
      label: str(prop.title) ?? name,
      type,
      required: required.has(name),
    };
    const description = str(prop.description);
    if (description) field.description = description;
    const choices = choicesOf(multiple ? items : prop);
    if (choices) field.choices = choices;
    if (multiple) field.multiple = true;
    const d = prop.default;
    if (typeof d === "string" || typeof d === "number" || typeof d === "boolean") field.default = d;
    for (const key of ["minimum", "maximum", "minLength", "maxLength"] as const)
      if (typeof prop[key] === "number") field[key] = prop[key] as number;
    const format = str(prop.format);
    if (format) field.format = format;
    return field;
  });
}

/**
 * Turn what a person typed into a field's value. Empty input means "not answered" (the
 * default then applies, or a required field is asked again). The message says what to type.
 */
export function parseElicitationAnswer(
  field: ElicitationField,
  text: string,
): { ok: true; value?: string | number | boolean | string[] } | { ok: false; message: string } {
  const input = text.trim();
  if (input === "")
    return field.required && field.default === undefined
      ? { ok: false, message: `${field.label} is required.` }
      : { ok: true };
  const pick = (one: string) => {
    const hit = field.choices?.find((c) => c.value === one || c.label.toLowerCase() === one.toLowerCase());
    const index = Number(one);
    if (!hit && Number.isInteger(index) && index >= 1 && field.choices && index <= field.choices.length)
      return field.choices[index - 1]?.value;
    return hit?.value;
  };
  if (field.choices) {
    const picked = field.multiple ? input.split(",").map((s) => pick(s.trim())) : [pick(input)];
    if (picked.some((v) => v === undefined))
      return {
        ok: false,
        message: `Choose from: ${field.choices.map((c, i) => `${i + 1}) ${c.label}`).join(", ")}.`,
      };
    return { ok: true, value: field.multiple ? (picked as string[]) : (picked[0] as string) };
  }
  if (field.type === "boolean") {
    if (/^(y|yes|true|1)$/i.test(input)) return { ok: true, value: true };
    if (/^(n|no|false|0)$/i.test(input)) return { ok: true, value: false };
    return { ok: false, message: "Answer y or n." };
  }
  if (field.type === "number" || field.type === "integer") {
    const n = Number(input);
    if (!Number.isFinite(n) || (field.type === "integer" && !Number.isInteger(n)))
      return { ok: false, message: `Enter ${field.type === "integer" ? "a whole number" : "a number"}.` };
    if (field.minimum !== undefined && n < field.minimum)
      return { ok: false, message: `At least ${field.minimum}.` };
    if (field.maximum !== undefined && n > field.maximum)
      return { ok: false, message: `At most ${field.maximum}.` };
    return { ok: true, value: n };
  }
  if (field.minLength !== undefined && input.length < field.minLength)
    return { ok: false, message: `At least ${field.minLength} characters.` };
  if (field.maxLength !== undefined && input.length > field.maxLength)
    return { ok: false, message: `At most ${field.maxLength} characters.` };
  return { ok: true, value: input };
}
