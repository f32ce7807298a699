/** The marker @capgate/schema's `CapgateError.isInstance` looks for (it works across package copies). */
const CAPGATE_ERROR = Symbol.for("capgate.error");

/**
 * Bad shell rules: code `invalid_config`, `property` naming the value to blame (e.g.
 * `policy.shell.deny[0].prefix`). It carries the capgate error marker, so hosts that use
 * @capgate/schema treat it as a `CapgateError` (`CapgateError.isInstance`, `isRejection`) —
 * without this package importing schema, whose validator would slow the hook's cold start.
 */
export class ShellRulesError extends Error {
  readonly code = "invalid_config";
  readonly property: string;
  readonly [CAPGATE_ERROR] = true;

  constructor(message: string, property: string) {
    super(message);
    this.name = "ShellRulesError";
    this.property = property;
  }

  toJSON(): { code: string; message: string; property: string } {
    return { code: this.code, message: this.message, property: this.property };
  }
}
