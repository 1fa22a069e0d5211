/**
 * The stored shape of a request record's usage evidence (`requests.usage_evidence`; records
 * written before migration 0030 also have their frames in `usage_frames`): written by
 * metering (src/metering/usage-evidence.ts builds it), read back by the usage queries. It
 * lives with the database layer so both sides share it without the queries depending on
 * metering.
 */

/** Whose key an attempt used. */
export type AccountLabel = "platform" | "byok";

export type UsageSource = "provider_reported" | "estimated" | "unknown";

/** The six integer counters of `raw_usage` and of a frame's `usage`. */
export interface UsageCounts {
  cache_read_tokens: number;
  cache_write_tokens: number;
  completion_tokens: number;
  prompt_tokens: number;
  reasoning_tokens: number;
  web_search_count: number;
}

export interface EffectiveUsageCounts extends UsageCounts {
  media_input_count: number;
  media_output_count: number;
}

export interface UsageFrameRecord {
  account_label: AccountLabel;
  attempt_ordinal: number;
  frame_kind: "usage";
  frame_ordinal: number;
  provider_id: string;
  provider_model_id: string;
  usage: UsageCounts;
}

/** A request record's `usage_evidence` (docs/architecture.md "Metering"), field for field. */
export interface UsageEvidence {
  source: UsageSource;
  effective_usage: EffectiveUsageCounts;
  raw_usage: UsageCounts;
  estimator: { chars_per_token: number; version: string };
  raw_usage_frames: UsageFrameRecord[];
}
