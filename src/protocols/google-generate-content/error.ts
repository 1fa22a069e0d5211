import { ERROR_TABLE } from "../../errors/error-table";
import { irError, renderedKind, upstreamAuthError, type IrError, type IrErrorKind } from "../../ir";
import { errorHeaders } from "../shared/error-headers";
import { isRecord } from "../shared/json-fields";
import { kindOfUpstreamStatus } from "../shared/upstream-status-kind";

/** Google RPC status name -> kind, for upstream errors (the other way is the error table's `googleStatus`). */
const GOOGLE_STATUS_TO_KIND: Record<string, IrErrorKind> = {
  INVALID_ARGUMENT: "invalid_request",
  OUT_OF_RANGE: "invalid_request",
  FAILED_PRECONDITION: "upstream_payment_required",
  UNAUTHENTICATED: "upstream_auth_required",
  PERMISSION_DENIED: "upstream_auth_required",
  NOT_FOUND: "not_found",
  RESOURCE_EXHAUSTED: "upstream_rate_limited",
  DEADLINE_EXCEEDED: "upstream_timeout",
  UNAVAILABLE: "upstream_unavailable",
  INTERNAL: "upstream_bad_gateway",
  UNKNOWN: "upstream_bad_gateway",
};

export function toGoogleStatus(error: IrError): string {
  return ERROR_TABLE[renderedKind(error)].googleStatus;
}

/** The `{error:{code, message, status, details}}` envelope, shared by HTTP errors and stream error frames. */
export function googleErrorEnvelope(error: IrError): { error: Record<string, unknown> } {
  return {
    error: {
      code: error.status,
      message: error.message,
      status: toGoogleStatus(error),
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: ERROR_TABLE[error.kind].code, domain: "switchyard" }],
    },
  };
}

export function encodeGeminiError(error: IrError): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
  return { status: error.status, body: googleErrorEnvelope(error), headers: errorHeaders(error) };
}

/** Seconds from a `retry-after` header, or from a google.rpc.RetryInfo `retryDelay` like "37s". */
function retryAfterSeconds(headers: Record<string, string> | undefined, envelope: Record<string, unknown> | undefined): number | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() !== "retry-after") continue;
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  }
  const details = envelope?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isRecord(detail) || typeof detail.retryDelay !== "string" || !detail.retryDelay.endsWith("s")) continue;
    const seconds = Number(detail.retryDelay.slice(0, -1));
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  }
  return undefined;
}

/** Upstream Gemini error (HTTP status + body, or a stream error frame) -> IR. */
export function decodeGeminiError(status: number | undefined, body: unknown, headers?: Record<string, string>): IrError {
  // Non-SSE streaming errors arrive as a one-element array.
  const unwrapped = Array.isArray(body) ? body[0] : body;
  const envelope = isRecord(unwrapped) && isRecord(unwrapped.error) ? unwrapped.error : undefined;
  const googleStatus = typeof envelope?.status === "string" ? envelope.status : undefined;
  const code = typeof envelope?.code === "number" ? envelope.code : undefined;
  const effectiveStatus = status ?? code ?? 502;
  // Own keys only: an upstream (a BYOK api_base is the customer's server) may send "constructor" as the status.
  const kind = (googleStatus !== undefined && Object.hasOwn(GOOGLE_STATUS_TO_KIND, googleStatus) ? GOOGLE_STATUS_TO_KIND[googleStatus] : undefined) ?? kindOfUpstreamStatus(effectiveStatus);
  const upstreamMessage =
    typeof envelope?.message === "string" ? envelope.message : typeof body === "string" && body !== "" ? body : undefined;
  const message =
    kind === "upstream_bad_gateway" ? "upstream request failed" : (upstreamMessage ?? `upstream returned HTTP ${effectiveStatus}`);
  if (kind === "upstream_auth_required") return upstreamAuthError(googleStatus === "PERMISSION_DENIED" ? 403 : effectiveStatus, message);
  if (kind === "invalid_request") return irError(kind, message, { upstreamError: envelope ?? body });
  const retryAfter = kind === "upstream_rate_limited" ? retryAfterSeconds(headers, envelope) : undefined;
  return irError(kind, message, retryAfter === undefined ? {} : { retryAfter });
}
