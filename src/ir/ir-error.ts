import { ERROR_TABLE, isStatusOf, type ErrorStatus, type IrErrorKind } from "../errors/error-table";

export { renderedKind, type IrErrorKind } from "../errors/error-table";

/**
 * An error in the inference vocabulary: its kind is one the error table
 * (src/errors/error-table.ts, docs/errors.md "Inference errors") names in every inference
 * protocol, its status the table's for that kind; codecs render it in their protocol's shape.
 */
export interface IrError {
  kind: IrErrorKind;
  /** The table's status for `kind` (ERROR_TABLE); set by `irError`, never chosen by a caller. */
  status: number;
  message: string;
  /** Seconds, for 429 and 503. */
  retryAfter?: number;
  /** For an upstream 400 passed through: the upstream's own error object or string. */
  upstreamError?: unknown;
}

/** What an error carries besides its kind and message. `status` only picks among the table's statuses for the kind. */
interface IrErrorDetails<K extends IrErrorKind> {
  retryAfter?: number;
  upstreamError?: unknown;
  status?: ErrorStatus<K>;
}

export function irError<K extends IrErrorKind>(kind: K, message: string, details: IrErrorDetails<K> = {}): IrError {
  const status = details.status ?? ERROR_TABLE[kind].status;
  if (!isStatusOf(kind, status)) throw new TypeError(`the error table gives ${kind} no status ${status}`);
  return { ...details, kind, status, message };
}

/** An upstream refused our credential: its 403 stays a 403, anything else is a 401. */
export function upstreamAuthError(upstreamStatus: number | undefined, message: string): IrError {
  return irError("upstream_auth_required", message, { status: upstreamStatus === 403 ? 403 : 401 });
}

/** Thrown by decoders for a malformed client body; rendered as 400 in the client's protocol. */
export class IrDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IrDecodeError";
  }
}
