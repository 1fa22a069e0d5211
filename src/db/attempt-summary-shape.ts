/**
 * One attempt of a request as its record keeps it (`requests.attempts`, migration 0028):
 * which endpoint it tried and how that ended. Written by metering
 * (src/metering/attempt-summary.ts), read by the request detail. The gateway's error kind
 * only, never an upstream's error text, which may quote the prompt.
 */
export interface AttemptSummary {
  ordinal: number;
  provider_id: string;
  model_id: string;
  funding_source: "cloud_credit" | "byok";
  outcome: "success" | "provider_error" | "timeout" | "client_error" | "aborted";
  /** The upstream's HTTP status, when it answered one. */
  status_code: number | null;
  /** The gateway's error kind for a failed attempt (e.g. upstream_timeout), else null. */
  error: string | null;
  duration_ms: number | null;
  ttft_ms: number | null;
}
