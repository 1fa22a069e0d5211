import type { AttemptSummary } from "../db/attempt-summary-shape";
import type { AttemptRecord } from "../routing/attempt-record";

const milliseconds = (from: number, to: number | undefined) => (to === undefined ? null : Math.max(0, Math.round(to - from)));

/** A request's attempts as its record keeps them (AttemptSummary). */
export function attemptSummaries(attempts: readonly AttemptRecord[]): AttemptSummary[] {
  return attempts.map((attempt) => ({
    ordinal: attempt.ordinal,
    provider_id: attempt.candidate.providerId,
    model_id: attempt.candidate.modelId,
    funding_source: attempt.candidate.funding,
    outcome: attempt.outcome,
    status_code: attempt.status ?? null,
    error: attempt.error?.kind ?? null,
    duration_ms: milliseconds(attempt.startedAt, attempt.endedAt),
    ttft_ms: milliseconds(attempt.startedAt, attempt.firstTokenAt),
  }));
}
