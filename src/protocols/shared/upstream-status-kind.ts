import type { IrErrorKind } from "../../ir";

/**
 * The kind of an upstream error from its HTTP status alone: what the Anthropic and Gemini
 * decoders fall back on when the body names no type they know. A 5xx other than 503 and
 * 504 is the upstream's own failure.
 */
export function kindOfUpstreamStatus(status: number): IrErrorKind {
  if (status === 400 || status === 422) return "invalid_request";
  if (status === 401 || status === 403) return "upstream_auth_required";
  if (status === 402) return "upstream_payment_required";
  if (status === 404) return "not_found";
  if (status === 408 || status === 504) return "upstream_timeout";
  if (status === 413) return "payload_too_large";
  if (status === 429) return "upstream_rate_limited";
  if (status === 503) return "upstream_unavailable";
  return "upstream_bad_gateway";
}
