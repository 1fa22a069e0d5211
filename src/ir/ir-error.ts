/**
 * One error table for inference: kind -> HTTP status -> type/code.
 * Codecs render an IrError in their protocol's shape.
 */
export type IrErrorKind =
  | "invalid_request"
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
  | "internal";

export interface IrError {
  kind: IrErrorKind;
  status: number;
  message: string;
  /** Seconds, for 429. */
  retryAfter?: number;
  /** For an upstream 400 passed through: the upstream's own error object or string. */
  upstreamError?: unknown;
}

interface ErrorRow {
  status: number;
  /** OpenAI-style `type` */
  type: string;
  code: string;
}

export const IR_ERROR_TABLE: Record<IrErrorKind, ErrorRow> = {
  invalid_request: { status: 400, type: "invalid_request_error", code: "invalid_request" },
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
  upstream_auth_required: { status: 401, type: "authentication_error", code: "upstream_auth_required" },
  upstream_timeout: { status: 504, type: "upstream_error", code: "upstream_timeout" },
  upstream_unavailable: { status: 503, type: "upstream_error", code: "upstream_unavailable" },
  internal: { status: 500, type: "internal_error", code: "internal_error" },
};

export function irError(kind: IrErrorKind, message: string, extra: Partial<IrError> = {}): IrError {
  return { kind, status: IR_ERROR_TABLE[kind].status, message, ...extra };
}

/** Thrown by decoders for a malformed client body; rendered as 400 in the client's protocol. */
export class IrDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IrDecodeError";
  }
}
