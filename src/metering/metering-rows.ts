import type { UsageEvidence } from "../db/usage-evidence-shape";
import type { AttemptSummary } from "../db/attempt-summary-shape";

/** Row shapes written by the metering batches (sql/queries/metering.sql), snake_case as stored. */
export interface RequestRow {
  id: string;
  request_id: string;
  account_id: string;
  namespace_id: string | null;
  /** The API key that made the request (api_keys.id), or null. */
  api_key_id: string | null;
  /** The OAuth grant whose access token made the request (oauth_tokens.id), or null. */
  oauth_token_id: string | null;
  status: string;
  status_code: number;
  billing_status: string;
  model_id: string | null;
  provider_id: string | null;
  provider_model_id: string | null;
  routing_profile: string | null;
  funding_source: string;
  streamed: boolean;
  finish_reason: string | null;
  first_token_kind: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  final_charge_micro_usd: number | null;
  request_duration_ms: number;
  upstream_duration_ms: number | null;
  generation_duration_ms: number | null;
  ttft_ms: number | null;
  used_capabilities: string[];
  usage_evidence: UsageEvidence;
  warnings: unknown[];
  /** Every attempt, in order (attempt-summary.ts). */
  attempts: AttemptSummary[];
  /** What a computed charge was computed from; null when none was (migration 0030). */
  charge_audit: ChargeAudit | null;
  created_at: string;
  completed_at: string;
}

/**
 * The catalog pricing and the token buckets a computed charge was summed from, kept on the
 * record so the charge can be recomputed. (Records before migration 0030 have theirs in
 * billing_audit, and their frames in usage_frames as well as in `usage_evidence`.)
 */
export interface ChargeAudit {
  /** The serving attempt's (absent when none served and only unserved attempts were charged). */
  pricing?: unknown;
  buckets?: unknown;
  /** Attempts the provider answered 2xx that failed before serving: each one's pricing, buckets and charge. */
  unserved_attempts?: unknown[];
}

export interface LedgerRow {
  id: string;
  account_id: string;
  namespace_id: string | null;
  request_record_id: string | null;
  kind: "usage" | "pending_debit_recovery" | "credit" | "refund";
  amount_micro_usd: number;
  /** What leaves the reservation with this entry: the charge, taken out of `lease_id`. */
  released_micro_usd: number;
  lease_id: string | null;
}

/** Where settled rows go: the batched write buffer in production. */
export interface MeteringSink {
  request(row: RequestRow): void;
  ledger(row: LedgerRow): void;
}
