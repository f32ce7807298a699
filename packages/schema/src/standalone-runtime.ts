// What precompiled validators (`@capgate/schema/standalone`) call at run time: ajv's two
// helpers that capgate's schemas use, without ajv's compiler. Kept out of the package root,
// which never needs them.
import ucs2lengthModule from "ajv/dist/runtime/ucs2length.js";
import formatsModule from "ajv-formats/dist/formats.js";

// Both are CommonJS with `exports.default`/named exports; normalise the shapes an ES import gives.
const ucs2length = ((ucs2lengthModule as { default?: unknown }).default ?? ucs2lengthModule) as (
  text: string,
) => number;
const formatsShapes = formatsModule as unknown as {
  fullFormats?: unknown;
  default?: { fullFormats?: unknown };
};
const fullFormats = formatsShapes.fullFormats ?? formatsShapes.default?.fullFormats;

/** Module id, as ajv's standalone code requires it → what that require returns. */
export const RUNTIME_MODULES: Readonly<Record<string, unknown>> = Object.freeze({
  "ajv/dist/runtime/ucs2length": { default: ucs2length },
  "ajv-formats/dist/formats": { fullFormats },
});

/** The `require` of precompiled validator code. */
export function standaloneRequire(id: string): unknown {
  const found = RUNTIME_MODULES[id];
  if (found === undefined)
    throw new Error(`precompiled validator code requires ${id}, which is not provided`);
  return found;
}
