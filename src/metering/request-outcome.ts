import type { IrFinish, IrRequest, IrWarning, ProtocolId } from "../ir";
import type { Principal } from "../auth/principal";
import type { AttemptRecord } from "../routing/attempt-record";
import { newTimeOrderedId } from "../ids";

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
  /** For the 4-chars-per-token estimate when usage is missing. */
  promptChars: number;
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
