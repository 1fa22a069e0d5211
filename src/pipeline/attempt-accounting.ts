import type { IrError } from "../ir";
import type { Metrics } from "../observability/metrics";
import type { EndpointStats } from "../routing/endpoint-stats";
import type { AttemptRecord } from "../routing/attempt-record";
import { recordAttempt } from "../routing/record-attempt";
import type { TranslationSignals } from "../translation/translation-types";
import type { StreamObserver } from "./stream-observer";
import type { RequestSettlement } from "./settle";

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

/**
 * The observer that accounts for one streamed attempt: its outputs' signals go into the
 * attempt's record (usage, output characters, time to first token), their warnings into the
 * request's (after the response head, the record is where a stream's warnings can go), and
 * at the end the attempt is counted and the request settled, as the serving attempt.
 */
export function attemptObserver(attempt: AttemptRecord, settlement: RequestSettlement, telemetry: AttemptTelemetry, clientSignal: AbortSignal): StreamObserver {
  return {
    onParts(output) {
      const signals = output.signals;
      const last = attempt.signals.at(-1);
      // Most chunks only add output characters: they fold into the previous entry, so a long
      // stream does not keep one entry per chunk until it is settled.
      if (last !== undefined && onlyOutputChars(signals)) last.outputBytes += signals.outputBytes;
      else attempt.signals.push(signals);
      if (signals.firstToken && attempt.firstTokenAt === undefined) attempt.firstTokenAt = performance.now();
      if (output.warnings) settlement.outcome.warnings.push(...output.warnings);
    },
    onEnd(end) {
      if (end.warnings) settlement.outcome.warnings.push(...end.warnings);
      finishAttempt(telemetry, attempt, clientSignal.aborted ? "aborted" : end.attemptOutcome, end.error);
      if (end.readToEnd) settlement.serveRefused(attempt, true);
      else settlement.serve(attempt, end.interrupted);
      const chargeMicroUsd = settlement.settle(end.status, 200)?.chargeMicroUsd ?? null;
      return { chargeMicroUsd, holdsEnded: settlement.holdsEnded() };
    },
  };
}

function onlyOutputChars(signals: TranslationSignals): boolean {
  return signals.firstToken === undefined && signals.usageFrames.length === 0 && signals.finish === undefined && signals.error === undefined && signals.toolCalls === 0;
}
