import type { EndpointStats } from "./endpoint-stats";
import type { AttemptRecord } from "./attempt-record";

/** Feeds one finished attempt into the endpoint telemetry that ranks latency and throughput. */
export function recordAttempt(stats: EndpointStats, attempt: AttemptRecord): void {
  // The caller's own errors and the caller hanging up say nothing about the provider.
  if (attempt.outcome === "client_error" || attempt.outcome === "aborted") return;
  const latencyMs = attempt.endedAt !== undefined ? attempt.endedAt - attempt.startedAt : undefined;
  const ttftMs = attempt.firstTokenAt !== undefined ? attempt.firstTokenAt - attempt.startedAt : undefined;
  let outputTokensPerSecond: number | undefined;
  const completion = attempt.signals.flatMap((s) => s.usageFrames).reduce<number | undefined>((last, u) => u.completionTokens ?? last, undefined);
  if (completion !== undefined && attempt.endedAt !== undefined && attempt.firstTokenAt !== undefined) {
    const seconds = (attempt.endedAt - attempt.firstTokenAt) / 1000;
    if (seconds > 0) outputTokensPerSecond = completion / seconds;
  }
  stats.record(attempt.candidate.statsKey, {
    outcome: attempt.outcome,
    ...(latencyMs !== undefined ? { latencyMs } : {}),
    ...(ttftMs !== undefined ? { ttftMs } : {}),
    ...(outputTokensPerSecond !== undefined ? { outputTokensPerSecond } : {}),
  });
}
