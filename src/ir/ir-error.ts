import { ApiError, type ApiErrorDetails } from "../errors/api-error";
import { IR_ERROR_KINDS, type IrErrorKind } from "../errors/error-table";

export { renderedKind, type IrErrorKind } from "../errors/error-table";

/**
 * An error in the inference vocabulary, as codecs read and write it: a kind the error table
 * (src/errors/error-table.ts, docs/errors.md "Inference errors") names in every inference
 * protocol, the table's status for it, and what its answer says. Every one the gateway
 * makes is an ApiError (`irError`, `ApiError.from`), which is how a thrown one is known
 * (`isIrError`); codecs only read the fields.
 */
export interface IrError {
  readonly kind: IrErrorKind;
  readonly status: number;
  readonly message: string;
  /** Seconds, for 429 and 503. */
  readonly retryAfter?: number;
  /** For an upstream 400 passed through: the upstream's own error object or string. */
  readonly upstreamError?: unknown;
}

/** An inference error. `details.status` only picks among the table's statuses for the kind. */
export function irError<K extends IrErrorKind>(kind: K, message: string, details: Omit<ApiErrorDetails<K>, "headers"> = {}): ApiError<K> {
  return new ApiError(kind, message, details);
}

const IR_KINDS: ReadonlySet<string> = new Set(IR_ERROR_KINDS);

/** An ApiError an inference client can be answered with in its protocol. */
export function isIrError(error: unknown): error is ApiError<IrErrorKind> {
  return error instanceof ApiError && IR_KINDS.has(error.kind);
}

/** An upstream refused our credential: its 403 stays a 403, anything else is a 401. */
export function upstreamAuthError(upstreamStatus: number | undefined, message: string): ApiError<"upstream_auth_required"> {
  return irError("upstream_auth_required", message, { status: upstreamStatus === 403 ? 403 : 401 });
}

/** Thrown by decoders for a malformed client body; rendered as 400 in the client's protocol. */
export class IrDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IrDecodeError";
  }
}
