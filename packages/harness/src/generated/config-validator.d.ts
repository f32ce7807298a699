import type { PrecompiledValidators } from "@capgate/schema";

export declare const configValidators: PrecompiledValidators;
