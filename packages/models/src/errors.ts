import { CapgateError } from "@capgate/errors";

/** Every `code` a ModelError can carry. Callers switch on these; they never change meaning. */
export type ModelErrorCode =
  | "model_http_error"
  | "model_rate_limited"
  | "model_auth"
  | "model_network"
  | "model_timeout"
  | "model_aborted"
  | "model_bad_response"
  | "model_error"
  | "missing_api_key"
  | "unknown_provider"
  | "invalid_model_spec"
  | "invalid_option"
  | "invalid_request"
  | "scripted_exhausted"
  | "scripted_invalid";

export interface ModelErrorOptions {
  /** The option, request field or script element to blame, e.g. `messages[2].role`. */
  property?: string;
  /** HTTP status of the last failed response, when there was one. */
  status?: number;
  /** How many HTTP attempts were made before giving up. */
  attempts?: number;
  cause?: unknown;
}

/**
 * The one error type of @capgate/models. `code` is stable; `status` is the HTTP status of the
 * last response when the provider answered; `attempts` counts requests made. An aborted call
 * has `code: "model_aborted"` and `name: "AbortError"`, so both common checks work.
 */
export class ModelError extends CapgateError {
  declare readonly code: ModelErrorCode;
  readonly status: number | undefined;
  readonly attempts: number | undefined;

  constructor(code: ModelErrorCode, message: string, options: ModelErrorOptions = {}) {
    super(code, message, { property: options.property, cause: options.cause });
    this.name = code === "model_aborted" ? "AbortError" : "ModelError";
    this.status = options.status;
    this.attempts = options.attempts;
  }

  /** True for a ModelError from any copy of this package (where `instanceof` would fail). */
  static override isInstance(error: unknown): error is ModelError {
    return CapgateError.isInstance(error) && "attempts" in error;
  }

  override toJSON(): {
    code: string;
    message: string;
    property?: string;
    status?: number;
    attempts?: number;
  } {
    return {
      code: this.code,
      message: this.message,
      ...(this.property === undefined ? {} : { property: this.property }),
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.attempts === undefined ? {} : { attempts: this.attempts }),
    };
  }
}

/** Whether `error` is a ModelError with the given code. */
export function isModelError(error: unknown, code?: ModelErrorCode): error is ModelError {
  return ModelError.isInstance(error) && (code === undefined || error.code === code);
}
