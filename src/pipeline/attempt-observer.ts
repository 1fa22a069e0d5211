import type { AttemptRecord } from "../routing/attempt-record";
import type { TranslationSignals } from "../translation/translation-types";
import type { StreamObserver } from "./stream-observer";
import { finishAttempt, type AttemptTelemetry } from "./finish-attempt";
import type { RequestSettlement } from "./settle";

/**
 * The observer that accounts for one streamed attempt: its outputs' signals go into the
 * attempt's record (usage, output characters, time to first token), and at the end the
 * attempt is counted and the request settled, as the serving attempt.
 */
export function attemptObserver(attempt: AttemptRecord, settlement: RequestSettlement, telemetry: AttemptTelemetry, clientSignal: AbortSignal): StreamObserver {
  return {
    onParts(output) {
      const signals = output.signals;
      const last = attempt.signals.at(-1);
      // Most chunks only add output characters: they fold into the previous entry, so a long
      // stream does not keep one entry per chunk until it is settled.
      if (last !== undefined && onlyOutputChars(signals)) last.outputChars += signals.outputChars;
      else attempt.signals.push(signals);
      if (signals.firstToken && attempt.firstTokenAt === undefined) attempt.firstTokenAt = performance.now();
    },
    onEnd(end) {
      finishAttempt(telemetry, attempt, clientSignal.aborted ? "aborted" : end.attemptOutcome, end.error);
      settlement.serve(attempt, end.interrupted);
      return settlement.settle(end.status, 200)?.chargeMicroUsd ?? null;
    },
  };
}

function onlyOutputChars(signals: TranslationSignals): boolean {
  return signals.firstToken === undefined && signals.usageFrames.length === 0 && signals.finish === undefined && signals.error === undefined && signals.toolCalls === 0;
}
