import type { IrError } from "../ir";
import type { Metrics } from "../observability/metrics";
import type { EndpointStats } from "../routing/endpoint-stats";
import type { AttemptRecord } from "../routing/attempt-record";
import { recordAttempt } from "../routing/record-attempt";

/** Where finished attempts are counted: the endpoint telemetry routing ranks by, and the metrics. */
export interface AttemptTelemetry {
  endpointStats: EndpointStats;
  metrics: Pick<Metrics, "upstreamAttempts">;
}

/** Closes one attempt's record and counts it. */
export function finishAttempt(telemetry: AttemptTelemetry, attempt: AttemptRecord, outcome: AttemptRecord["outcome"], error?: IrError): void {
  attempt.outcome = outcome;
  attempt.endedAt = performance.now();
  if (error) attempt.error = error;
  recordAttempt(telemetry.endpointStats, attempt);
  telemetry.metrics.upstreamAttempts.inc([attempt.candidate.providerId, outcome]);
}
