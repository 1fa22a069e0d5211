import type { IrFinish, IrRequest, IrWarning, ProtocolId } from "../ir";
import type { Principal } from "../auth/principal";
import type { AttemptRecord } from "../routing/attempt-record";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import { newTimeOrderedId } from "../ids";

/** What a request can be billed at most on one candidate, for estimates (pipeline/settle.ts builds it from the request). */
export interface UsageBounds {
  /** Admission's prompt ceiling: UTF-8 bytes of everything the upstream tokenizes, template allowances, media by per-item bounds. */
  promptTokens(candidate: AttemptCandidate): number;
  /** The output ceiling: the request's output limit there, reasoning included. */
  completionTokens(candidate: AttemptCandidate): number;
}

/** Everything settlement needs to know about one finished inference request. */
export interface RequestOutcome {
  /** Switchyard's own record id: the idempotency key of every row this request writes. */
  recordId: string;
  /** The client-visible id (x-request-id). */
  requestId: string;
  principal: Principal;
  /** The namespace the request is attributed to (the credential's, or the account's oldest live one). */
  namespaceId: string | null;
  clientProtocol: ProtocolId;
  streamed: boolean;
  createdAt: Date;
  /** performance.now() at arrival, for durations. */
  startedAt: number;
  status: "succeeded" | "failed" | "cancelled";
  statusCode: number;
  /** The model the client asked for first (undefined when the body never decoded). */
  requestedModel?: string;
  routingProfile?: string;
  attempts: AttemptRecord[];
  /** The attempt whose answer reached the client. */
  serving?: AttemptRecord;
  /** Prompt characters, for ranking candidates by expected cost. */
  promptChars: number;
  /** Upper bounds for usage an upstream never reported (set once the body is decoded). */
  bounds?: UsageBounds;
  /** The serving attempt's answer was read whole: its reported usage is final whatever the request's status (an answer a response-side check refused). */
  usageFinal?: boolean;
  /** The client went away before the upstream's final usage report. */
  clientDisconnected: boolean;
  /** Micro-USD reserved at admission against `leaseId` (see wallet-leases.ts). */
  reservedMicroUsd: number;
  leaseId?: string;
  warnings: IrWarning[];
  usedCapabilities: string[];
}

/**
 * A request as it arrives, before anything about it is known: no attempts, nothing
 * reserved, and a 500 until it ends some other way. Its record id is new
 * and time-ordered (see newTimeOrderedId).
 */
export function arrivingRequest(input: Pick<RequestOutcome, "requestId" | "principal" | "clientProtocol" | "createdAt" | "startedAt">): RequestOutcome {
  return {
    ...input,
    recordId: newTimeOrderedId("rq"),
    namespaceId: input.principal.namespaceId,
    streamed: false,
    status: "failed",
    statusCode: 500,
    attempts: [],
    promptChars: 0,
    clientDisconnected: false,
    reservedMicroUsd: 0,
    warnings: [],
    usedCapabilities: [],
  };
}

/** The capability names (catalog vocabulary) a request exercises, for usage aggregates. */
export function usedCapabilities(request: IrRequest): string[] {
  const used = new Set<string>();
  if (request.tools && request.tools.length > 0) used.add("tools");
  if (request.responseFormat?.type === "json_schema" || request.responseFormat?.type === "json_object") used.add("structured_outputs");
  if (request.params.reasoningEffort !== undefined || request.params.thinkingBudgetTokens !== undefined) used.add("reasoning");
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === "image") used.add("image_input");
      else if (part.type === "file") used.add("file_input");
    }
  }
  return [...used].sort();
}

/** Canonical finish reason text for the record: `other(<raw>)` keeps what we could not map. */
export function finishText(finish: IrFinish | undefined): string | null {
  if (!finish) return null;
  if (finish.reason === "other") return `other(${finish.raw ?? "unknown"})`;
  return finish.reason;
}
