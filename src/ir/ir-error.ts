/**
 * One error table for inference: kind -> HTTP status -> type/code (docs/errors.md "Inference errors"). Every
 * IrError's status comes from here; codecs render the kind in their protocol's shape, and
 * each protocol's own names for a kind (Anthropic `error.type`, Google `error.status`) sit
 * in a table of its own, keyed by every kind, so a new kind cannot go unrendered.
 */
export type IrErrorKind =
  | "invalid_request"
  | "client_timeout"
  | "authentication"
  | "payment_required"
  | "upstream_payment_required"
  | "budget_exceeded"
  | "permission_denied"
  | "not_found"
  | "rate_limited"
  | "upstream_rate_limited"
  | "upstream_policy_violation"
  | "upstream_bad_gateway"
  | "upstream_invalid_response"
  | "upstream_auth_required"
  | "upstream_timeout"
  | "upstream_unavailable"
  | "payload_too_large"
  | "internal"
  | "service_unavailable";

export interface IrError {
  kind: IrErrorKind;
  /** The table's status for `kind` (IR_ERROR_TABLE); set by `irError`, never chosen by a caller. */
  status: number;
  message: string;
  /** Seconds, for 429 and 503. */
  retryAfter?: number;
  /** For an upstream 400 passed through: the upstream's own error object or string. */
  upstreamError?: unknown;
}

interface ErrorRow {
  status: number;
  /** OpenAI-style `type` */
  type: string;
  code: string;
  /**
   * For a kind that keeps the upstream's status: each other status it may take, and the
   * kind whose protocol type (OpenAI `type`, Anthropic `error.type`, Google `status`) the
   * error then renders with. Its code stays its own.
   */
  alsoStatus?: Readonly<Record<number, IrErrorKind>>;
}

export const IR_ERROR_TABLE = {
  invalid_request: { status: 400, type: "invalid_request_error", code: "invalid_request" },
  // A streaming client that stopped reading: its own doing, so a request error.
  client_timeout: { status: 408, type: "invalid_request_error", code: "invalid_request" },
  authentication: { status: 401, type: "authentication_error", code: "authentication_error" },
  payment_required: { status: 402, type: "payment_required", code: "payment_required" },
  upstream_payment_required: { status: 402, type: "payment_required", code: "upstream_payment_required" },
  budget_exceeded: { status: 402, type: "payment_required", code: "budget_exceeded" },
  permission_denied: { status: 403, type: "permission_error", code: "permission_denied" },
  not_found: { status: 404, type: "not_found_error", code: "not_found" },
  payload_too_large: { status: 413, type: "invalid_request_error", code: "payload_too_large" },
  rate_limited: { status: 429, type: "rate_limit_error", code: "rate_limit_exceeded" },
  upstream_rate_limited: { status: 429, type: "rate_limit_error", code: "upstream_rate_limited" },
  upstream_policy_violation: { status: 403, type: "permission_error", code: "upstream_policy_violation" },
  upstream_bad_gateway: { status: 502, type: "upstream_error", code: "upstream_bad_gateway" },
  upstream_invalid_response: { status: 502, type: "upstream_error", code: "upstream_invalid_response" },
  // An upstream that refuses our credential keeps its status: its 403 stays a 403, a permission error.
  upstream_auth_required: { status: 401, type: "authentication_error", code: "upstream_auth_required", alsoStatus: { 403: "permission_denied" } },
  upstream_timeout: { status: 504, type: "upstream_error", code: "upstream_timeout" },
  upstream_unavailable: { status: 503, type: "upstream_error", code: "upstream_unavailable" },
  internal: { status: 500, type: "internal_error", code: "internal_error" },
  // Ours, and temporary (the database unreachable, shutdown): retry, here or elsewhere.
  service_unavailable: { status: 503, type: "internal_error", code: "internal_error" },
} as const satisfies Record<IrErrorKind, ErrorRow>;

/** The statuses the table gives a kind besides its own (only a kind that keeps the upstream's status has any). */
type OtherStatus<K extends IrErrorKind> = K extends K ? ((typeof IR_ERROR_TABLE)[K] extends { alsoStatus: infer Other } ? keyof Other : never) : never;

/** What an error carries besides its kind and message. `status` only picks among the table's statuses for the kind. */
interface IrErrorDetails<K extends IrErrorKind> {
  retryAfter?: number;
  upstreamError?: unknown;
  status?: (typeof IR_ERROR_TABLE)[K]["status"] | OtherStatus<K>;
}

export function irError<K extends IrErrorKind>(kind: K, message: string, details: IrErrorDetails<K> = {}): IrError {
  const row: ErrorRow = IR_ERROR_TABLE[kind];
  const status = details.status ?? row.status;
  if (status !== row.status && row.alsoStatus?.[status] === undefined) throw new TypeError(`the error table gives ${kind} no status ${status}`);
  return { ...details, kind, status, message };
}

/** An upstream refused our credential: its 403 stays a 403, anything else is a 401. */
export function upstreamAuthError(upstreamStatus: number | undefined, message: string): IrError {
  return irError("upstream_auth_required", message, { status: upstreamStatus === 403 ? 403 : 401 });
}

/** The kind whose protocol type an error renders with: its own, or the one the table names for the status it kept. */
export function renderedKind(error: IrError): IrErrorKind {
  const row: ErrorRow = IR_ERROR_TABLE[error.kind];
  return row.alsoStatus?.[error.status] ?? error.kind;
}

/** Thrown by decoders for a malformed client body; rendered as 400 in the client's protocol. */
export class IrDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IrDecodeError";
  }
}
