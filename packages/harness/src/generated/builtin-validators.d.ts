import type { PrecompiledValidators } from "@capgate/schema";

export declare const builtinValidators: PrecompiledValidators;
