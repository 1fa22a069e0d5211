import { ERROR_TABLE } from "../../errors/error-table";
import { irError, renderedKind, upstreamAuthError, type IrError, type IrErrorKind } from "../../ir";
import { errorHeaders } from "../shared/error-headers";
import { isRecord } from "../shared/json-fields";
import { kindOfUpstreamStatus } from "../shared/upstream-status-kind";

/** Anthropic `error.type` -> kind, for upstream errors (the other way is the error table's `anthropicType`). */
const ANTHROPIC_TYPE_TO_KIND: Record<string, IrErrorKind> = {
  invalid_request_error: "invalid_request",
  authentication_error: "upstream_auth_required",
  permission_error: "upstream_auth_required",
  billing_error: "upstream_payment_required",
  not_found_error: "not_found",
  request_too_large: "payload_too_large",
  rate_limit_error: "upstream_rate_limited",
  timeout_error: "upstream_timeout",
  overloaded_error: "upstream_unavailable",
  api_error: "upstream_bad_gateway",
};

/** The HTTP status Anthropic pairs with each type; used for `event: error` frames, which carry none. */
const ANTHROPIC_TYPE_TO_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function toAnthropicErrorType(error: IrError): string {
  return ERROR_TABLE[renderedKind(error)].anthropicType;
}

export function encodeAnthropicError(error: IrError): {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
} {
  return {
    status: error.status,
    body: { type: "error", error: { type: toAnthropicErrorType(error), message: error.message } },
    headers: errorHeaders(error),
  };
}

/** Anthropic's own 529 (overloaded) is a busy upstream; every other status means what it means anywhere. */
function kindFromStatus(status: number): IrErrorKind {
  return status === 529 ? "upstream_unavailable" : kindOfUpstreamStatus(status);
}

function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** `retry-after` is seconds (or an HTTP date, which a router cannot use without a clock: ignored). */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

/** Upstream Anthropic error (HTTP status + body, or an `event: error` payload) -> IR. */
export function decodeAnthropicError(status: number | undefined, body: unknown, headers?: Record<string, string>): IrError {
  const envelope = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const type = typeof envelope?.type === "string" ? envelope.type : undefined;
  const upstreamMessage =
    typeof envelope?.message === "string" ? envelope.message : typeof body === "string" && body !== "" ? body : undefined;
  // Own keys only: an upstream (a BYOK api_base is the customer's server) may send "constructor" as the type.
  const known = type !== undefined && Object.hasOwn(ANTHROPIC_TYPE_TO_KIND, type) ? type : undefined;
  const effectiveStatus = status ?? (known !== undefined ? ANTHROPIC_TYPE_TO_STATUS[known] : undefined) ?? 502;
  const kind = (known !== undefined ? ANTHROPIC_TYPE_TO_KIND[known] : undefined) ?? kindFromStatus(effectiveStatus);
  const message =
    kind === "upstream_bad_gateway" ? "upstream request failed" : (upstreamMessage ?? `upstream returned HTTP ${effectiveStatus}`);
  if (kind === "upstream_auth_required") return upstreamAuthError(effectiveStatus, message);
  if (kind === "invalid_request") return irError(kind, message, { upstreamError: envelope ?? body });
  const retryAfter = kind === "upstream_rate_limited" ? parseRetryAfter(headerValue(headers, "retry-after")) : undefined;
  return irError(kind, message, retryAfter === undefined ? {} : { retryAfter });
}
