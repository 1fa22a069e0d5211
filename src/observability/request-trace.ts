import type { IrErrorKind, IrFinish, IrUsage, ProtocolId } from "../ir";

/**
 * What the pipeline calls to trace a request (docs/operations.md "Traces"), types only: tracing.ts
 * gives the implementation for tracing off, otel-tracing.ts the one for on. The pipeline
 * reports times (performance.now()) and, once, the settled request; spans are made from
 * them when the request ends. The Traced* types are what a trace reads of the pipeline's
 * own records (RequestOutcome, AttemptRecord, Settlement), written out here so that
 * observability depends on nothing above it. Nothing here reads a prompt, an answer, an
 * error's message or a key: only ids, models, statuses, counts and times.
 */

/**
 * The stages a trace times, in order (src/pipeline/README.md; its "resolve" is here
 * `resolve`, the routing presets, and `plan`, the ranked endpoints): each begins where the
 * one before ended, and a refused request's last is the stage that refused it.
 */
export type TraceStage = "authenticate" | "decode" | "resolve" | "plan" | "fund" | "admit" | "attempt";

/** What a trace reads of one upstream attempt (routing's AttemptRecord). */
export interface TracedAttempt {
  ordinal: number;
  candidate: {
    providerId: string;
    modelId: string;
    providerModelId: string;
    protocol: ProtocolId;
    funding: string;
    baseUrl: string;
    customerSuppliedBase?: boolean;
  };
  outcome: string;
  /** The upstream's HTTP status, when it answered. */
  status?: number;
  error?: { kind: IrErrorKind };
  signals: readonly { finish?: IrFinish }[];
  startedAt: number;
  firstTokenAt?: number;
  endedAt?: number;
}

/** What a trace reads of a settled request (metering's RequestOutcome). */
export interface TracedOutcome {
  requestId: string;
  status: "succeeded" | "failed" | "cancelled";
  statusCode: number;
  streamed: boolean;
  requestedModel?: string;
  attempts: readonly TracedAttempt[];
  serving?: TracedAttempt;
}

/** What a trace reads of the settlement (metering's Settlement): usage as billed and the charge. */
export interface TracedSettlement {
  usage: Pick<IrUsage, "promptTokens" | "completionTokens">;
  chargeMicroUsd: number | null;
}

/** The error a client is answered with: its kind and status only, never its message (it may quote the upstream). */
export interface TracedError {
  kind: IrErrorKind;
  status: number;
}

/** One inference request's trace, as the pipeline drives it. */
export interface RequestTrace {
  /** `name` ended now. */
  stage(name: TraceStage): void;
  /** The client is answered with `error` (called before the request is settled). */
  failed(error: TracedError): void;
  /**
   * The request ended: settled (a stream when it ends), or refused before it had a caller
   * (no outcome). The first call ends the trace; later ones are ignored.
   */
  end(outcome?: TracedOutcome, settlement?: TracedSettlement): void;
}

/** Where request traces come from. */
export interface RequestTracing {
  /** A trace for a request that arrived at `startedAt` (performance.now()). */
  start(request: Request, protocol: ProtocolId, requestId: string, startedAt: number): RequestTrace;
  /** Exports what is still queued (bounded in time) and stops; never rejects. */
  shutdown(): Promise<void>;
}
