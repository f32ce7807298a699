import { CapgateError } from "@capgate/errors";

/**
 * Bad shell rules: code `invalid_config`, `property` naming the value to blame (e.g.
 * `policy.shell.deny[0].prefix`). It is a `CapgateError` from
 * @capgate/errors (not @capgate/schema, whose validator would slow the hook's cold start).
 */
export class ShellRulesError extends CapgateError {
  declare readonly code: "invalid_config";
  declare readonly property: string;

  constructor(message: string, property: string) {
    super("invalid_config", message, { property });
    this.name = "ShellRulesError";
  }

  override toJSON(): { code: string; message: string; property: string } {
    return { code: this.code, message: this.message, property: this.property };
  }
}
