import type { IrUsage } from "../ir";
import { billingBuckets, type NormalisedUsage } from "./compute-charge";
import { ESTIMATOR } from "./estimate-tokens";
import type { AccountLabel, UsageCounts, UsageEvidence, UsageFrameRecord, UsageSource } from "../db/usage-evidence-shape";

/** One upstream attempt of a request, failed fallbacks included. */
export interface AttemptUsage {
  /** 1-based position in the request's attempt chain. */
  ordinal: number;
  providerId: string;
  /** The catalog endpoint's model id that was called, not the name the upstream echoed. */
  providerModelId: string;
  accountLabel: AccountLabel;
  /** Every usage report the attempt received, in arrival order. */
  usageFrames: readonly IrUsage[];
}

/**
 * Token counts for usage that never arrived, each an upper bound of what the provider can
 * bill (estimate-tokens.ts): the caller says why it is needed.
 */
export interface UsageEstimate {
  /** `usage_missing`: the serving attempt ended without a usage report. `client_disconnected`: the client left before the final usage frame. `stream_failed`: the stream ended early (an upstream failure, a response-side check, shutdown). */
  reason: "usage_missing" | "client_disconnected" | "stream_failed";
  /** The most prompt tokens the request can bill on the serving candidate. */
  promptTokens: number;
  /** The completion bound: the output's UTF-8 bytes, at most the request's output ceiling. */
  completionTokens: number;
}

export interface UsageEvidenceInput {
  attempts: readonly AttemptUsage[];
  /** The attempt whose response reached the client; undefined when none did. */
  servingAttemptOrdinal: number | undefined;
  estimate?: UsageEstimate;
}

/** The settlement receipt's `usage`: non-overlapping buckets, each ≥ 0. */
export interface SettlementUsage {
  uncached_input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

/** The estimator every record names: one object for all of them, not one per record waiting in the write buffer. */
const ESTIMATOR_EVIDENCE: UsageEvidence["estimator"] = Object.freeze({ chars_per_token: ESTIMATOR.chars_per_token, version: ESTIMATOR.version });

/**
 * The usage evidence of one request, and the usage to bill it by (undefined = unknown).
 * Frames are stored as reported; a counter the provider left out is 0 in a frame (the
 * record types it integer) but stays undefined in the billed usage.
 */
export function buildUsageEvidence(input: UsageEvidenceInput): { evidence: UsageEvidence; usage: NormalisedUsage } {
  const attempts = [...input.attempts].sort((left, right) => left.ordinal - right.ordinal);
  const serving = attempts.find((attempt) => attempt.ordinal === input.servingAttemptOrdinal);
  const reported = mergeFrames(serving?.usageFrames ?? []);
  const { usage, source } = resolveUsage(reported, input.estimate);
  const effective = countsOf(usage);
  const frames: UsageFrameRecord[] = attempts.flatMap((attempt) =>
    attempt.usageFrames.map((frame, index) => ({
      account_label: attempt.accountLabel,
      attempt_ordinal: attempt.ordinal,
      frame_kind: "usage" as const,
      frame_ordinal: index + 1,
      provider_id: attempt.providerId,
      provider_model_id: attempt.providerModelId,
      usage: countsOf(reportedFields(frame)),
    })),
  );
  // The usual request, one attempt with one frame: its raw usage is that frame's counts, and
  // the record (kept until it is written) holds one object for both, serialized twice.
  const onlyFrame = frames.length === 1 && serving !== undefined && serving.usageFrames.length === 1 ? frames[0]! : undefined;
  return {
    evidence: {
      source,
      effective_usage: { ...effective, media_input_count: 0, media_output_count: 0 },
      raw_usage: onlyFrame?.usage ?? countsOf(reported),
      estimator: ESTIMATOR_EVIDENCE,
      raw_usage_frames: frames,
    },
    usage,
  };
}

/** The settlement receipt buckets; contradictory or unknown counters clamp to 0. */
export function settlementUsage(usage: NormalisedUsage): SettlementUsage {
  const buckets = billingBuckets(usage);
  return {
    uncached_input_tokens: atLeastZero(buckets.uncachedInput),
    cache_read_tokens: atLeastZero(buckets.cacheRead),
    cache_write_tokens: atLeastZero(buckets.cacheWrite),
    output_tokens: atLeastZero(buckets.output),
    reasoning_tokens: atLeastZero(buckets.reasoning),
  };
}

/**
 * Later frames win field by field: Anthropic reports input at message_start and output at
 * message_delta; Gemini repeats cumulative counts on every chunk.
 */
function mergeFrames(frames: readonly IrUsage[]): NormalisedUsage {
  const merged: NormalisedUsage = {};
  for (const frame of frames) Object.assign(merged, reportedFields(frame));
  return merged;
}

/** Only non-negative integer counters count as reported; anything else stays unknown. */
function reportedFields(frame: IrUsage): NormalisedUsage {
  const fields: NormalisedUsage = {};
  if (isCount(frame.promptTokens)) fields.promptTokens = frame.promptTokens;
  if (isCount(frame.completionTokens)) fields.completionTokens = frame.completionTokens;
  if (isCount(frame.reasoningTokens)) fields.reasoningTokens = frame.reasoningTokens;
  if (isCount(frame.cacheReadTokens)) fields.cacheReadTokens = frame.cacheReadTokens;
  if (isCount(frame.cacheWriteTokens)) fields.cacheWriteTokens = frame.cacheWriteTokens;
  if (isCount(frame.webSearchCount)) fields.webSearchCount = frame.webSearchCount;
  return fields;
}

/**
 * The prompt count is known when the upstream starts, so a reported prompt (with its
 * cache split) stays authoritative even after a disconnect; the completion count is final
 * only when the stream ran to its usage frame. Whatever is not final comes from the
 * estimator. Estimated output counts reasoning as output (both bill at the output rate),
 * and an estimated prompt has no cache split.
 */
function resolveUsage(reported: NormalisedUsage, estimate: UsageEstimate | undefined): { usage: NormalisedUsage; source: UsageSource } {
  const anyReported = Object.keys(reported).length > 0;
  if (estimate === undefined) return { usage: reported, source: anyReported ? "provider_reported" : "unknown" };

  // Only a stream that ended normally has a final completion count (a failed one may carry a placeholder).
  const finalCompletion = estimate.reason === "usage_missing" ? reported.completionTokens : undefined;
  if (reported.promptTokens !== undefined && finalCompletion !== undefined) return { usage: reported, source: "provider_reported" };

  const promptReported = reported.promptTokens !== undefined;
  const usage: NormalisedUsage = {
    promptTokens: reported.promptTokens ?? Math.max(0, estimate.promptTokens),
    completionTokens: finalCompletion ?? Math.max(0, estimate.completionTokens),
    reasoningTokens: finalCompletion === undefined ? 0 : reported.reasoningTokens,
    cacheReadTokens: promptReported ? reported.cacheReadTokens : 0,
    cacheWriteTokens: promptReported ? reported.cacheWriteTokens : 0,
    webSearchCount: reported.webSearchCount,
  };
  return { usage, source: "estimated" };
}

function countsOf(usage: NormalisedUsage): UsageCounts {
  return {
    cache_read_tokens: usage.cacheReadTokens ?? 0,
    cache_write_tokens: usage.cacheWriteTokens ?? 0,
    completion_tokens: usage.completionTokens ?? 0,
    prompt_tokens: usage.promptTokens ?? 0,
    reasoning_tokens: usage.reasoningTokens ?? 0,
    web_search_count: usage.webSearchCount ?? 0,
  };
}

function isCount(value: number | undefined): value is number {
  return value !== undefined && Number.isSafeInteger(value) && value >= 0;
}

function atLeastZero(value: number): number {
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}
