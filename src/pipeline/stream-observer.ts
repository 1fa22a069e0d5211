import type { IrError, IrWarning } from "../ir";
import type { RequestOutcome } from "../metering/request-outcome";
import type { AttemptRecord } from "../routing/attempt-record";
import type { StreamOutput } from "../translation/translation-types";

/** Why an answer is refused by a response-side check, in the client's protocol. */
export interface StreamRefusal {
  error: IrError;
  /** The answer is complete at the upstream (a refused client action): read on to its usage before hanging up. */
  readOn?: true;
}

/** How a relayed stream ended. */
export interface StreamEnd {
  /** What the attempt's endpoint did, for its telemetry. */
  attemptOutcome: AttemptRecord["outcome"];
  error?: IrError;
  /** How the request ended, for its settlement. */
  status: RequestOutcome["status"];
  /** The client left or stopped reading before the end: the output produced so far is estimated. */
  interrupted: boolean;
  /** The upstream's stream was read to its end although the answer was refused: its usage report is final. */
  readToEnd?: boolean;
  /** What the client's protocol could not carry, raised as a failure ended the client's stream (that last output is not an `onParts`). */
  warnings?: IrWarning[];
}

/**
 * What watches a stream the relay writes (relay-stream.ts), so the relay itself knows
 * nothing of accounting, settlement or response-side checks.
 */
export interface StreamObserver {
  /**
   * Each output of the stream's translation session (its signals: first token, usage,
   * finish, error; and, when the stream is translated, the text the client gets and what
   * its protocol could not carry), before that text is written. A Refusal ends the
   * stream: before the first token the request is answered with the refusal's error;
   * after it, with the protocol's error frame.
   */
  onParts(parts: StreamOutput): StreamRefusal | void;
  /**
   * Called once, when the stream is over (or, for a stream that ended before its first
   * token, before anything is sent), before its last bytes are written.
   */
  onEnd(end: StreamEnd): StreamSettled;
}

/** What the stream's settlement tells the relay. */
export interface StreamSettled {
  /** The request's charge in micro-USD (null when unknown or nothing is recorded), which chat clients that asked for usage see in the final chunk. */
  chargeMicroUsd: number | null;
  /**
   * Resolves once what admission held for the request has ended (RequestSettlement.holdsEnded):
   * the stream's terminal event and its end wait for it, so a client that sends its next
   * request on reading them finds nothing of this one held.
   */
  holdsEnded: Promise<void>;
}
