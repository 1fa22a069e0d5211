import type { IrError } from "../ir";
import type { TranslationSignals } from "../translation/translation-types";
import type { AttemptCandidate } from "./attempt-candidate";

/**
 * What one upstream attempt saw: the record of fallbacks, for endpoint telemetry
 * (record-attempt.ts) and for settlement (src/metering/settle-request.ts).
 */
export interface AttemptRecord {
  ordinal: number;
  candidate: AttemptCandidate;
  outcome: "success" | "provider_error" | "timeout" | "client_error" | "aborted";
  status?: number;
  error?: IrError;
  signals: TranslationSignals[];
  startedAt: number;
  firstTokenAt?: number;
  endedAt?: number;
}
