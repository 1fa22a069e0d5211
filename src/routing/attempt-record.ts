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
  /**
   * Milliseconds this attempt waited for its upstream before the client's response head:
   * the call to the upstream's head (and an error status's body), a whole answer's body, a
   * stream's chunks until its first token. Undefined when no call was made (Server-Timing).
   */
  upstreamMs?: number;
  firstTokenAt?: number;
  endedAt?: number;
}
