/**
 * TypeScript types of tool arguments, read from a manifest's `as const` JSON Schema, so a
 * handler's `args` match what the executor validated. Covers the subset capability
 * schemas use: string/number/integer/boolean/array/object, enum, const, required.
 */
export type FromSchema<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly anyOf: readonly (infer A)[] }
      ? FromSchema<A>
      : S extends { readonly oneOf: readonly (infer O)[] }
        ? FromSchema<O>
        : S extends { readonly type: "string" }
          ? string
          : S extends { readonly type: "integer" | "number" }
            ? number
            : S extends { readonly type: "boolean" }
              ? boolean
              : S extends { readonly type: "null" }
                ? null
                : S extends { readonly type: "array"; readonly items: infer I }
                  ? FromSchema<I>[]
                  : S extends { readonly type: "array" }
                    ? unknown[]
                    : S extends { readonly type: "object"; readonly properties: infer P }
                      ? ObjectFromSchema<P, RequiredKeys<S>>
                      : S extends { readonly type: "object" }
                        ? Record<string, unknown>
                        : unknown;

type RequiredKeys<S> = S extends { readonly required: readonly (infer R)[] } ? R : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type ObjectFromSchema<P, R> = Simplify<
  { -readonly [K in keyof P as K extends R ? K : never]: FromSchema<P[K]> } & {
    -readonly [K in keyof P as K extends R ? never : K]?: FromSchema<P[K]>;
  }
>;
