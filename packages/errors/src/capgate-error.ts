const MARKER = Symbol.for("capgate.error");

export interface CapgateErrorOptions {
  property?: string;
  cause?: unknown;
}

/**
 * The one error base of capgate. `code` is a stable string that callers switch on;
 * `property` names the value to blame when there is one. `isInstance` works across
 * duplicated package copies, where `instanceof` would not.
 */
export class CapgateError extends Error {
  readonly code: string;
  readonly property: string | undefined;
  readonly [MARKER] = true;

  constructor(code: string, message: string, options: CapgateErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CapgateError";
    this.code = code;
    this.property = options.property;
  }

  static isInstance(error: unknown): error is CapgateError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[MARKER] === true &&
      typeof (error as { code?: unknown }).code === "string"
    );
  }

  toJSON(): { code: string; message: string; property?: string } {
    return this.property === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, property: this.property };
  }
}
