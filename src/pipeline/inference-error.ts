import { irError, isIrError, type IrError, type ProtocolId } from "../ir";
import { ApiError } from "../errors/api-error";
import { WorkerCrashedError } from "../workers";
import { codecFor } from "../translation/codec-registry";
import { log } from "../observability/log";

/** Renders an IrError as a response in the client's protocol. */
export function errorInProtocol(protocol: ProtocolId, error: IrError, requestId: string): Response {
  // A 429 always says when to come back; 1 s when nobody told us.
  if (error.status === 429 && error.retryAfter === undefined) error = ApiError.from({ ...error, retryAfter: 1 });
  const rendered = codecFor(protocol).encodeError(error);
  return new Response(JSON.stringify(rendered.body), {
    status: rendered.status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...rendered.headers },
  });
}

/** A value thrown on the inference path: inference errors as they are, a crashed translation worker as our own 500, anything else as `otherwise`. */
export function asIrError(error: unknown, otherwise: IrError): IrError {
  if (isIrError(error)) return error;
  if (error instanceof WorkerCrashedError) return irError("internal", "translation worker failed; please retry");
  return otherwise;
}

/** An unexpected failure on the inference path: logged (never the request's content) and answered as a 500, or as the inference error it already is. */
export function internalError(error: unknown, requestId: string): IrError {
  log.error("inference failed", { requestId, error: error instanceof Error ? error.message : String(error) });
  return asIrError(error, irError("internal", "internal error"));
}

/**
 * A refusal of an answer the upstream served (a response-side check): the request was
 * charged for it, and the error says so with the amount, in every protocol's message (a
 * chat answer would carry it as `usage.cost`; an error has no usage). `null`: unknown
 * amount; undefined: nothing is recorded (METERING=off), nothing is said.
 */
export function withChargeNote(error: IrError, chargeMicroUsd: number | null | undefined, served: "whole" | "partly" = "whole"): IrError {
  if (chargeMicroUsd === undefined) return error;
  // A stream refused midway is written before its settlement: its record has the amount.
  const amount = chargeMicroUsd === null ? "for it (the request's record has the amount)" : `${chargeMicroUsd} micro-USD`;
  const what = served === "whole" ? "served this answer" : "had produced part of this answer";
  return ApiError.from({ ...error, message: `${error.message} (the upstream ${what}, so the request was charged ${amount})` });
}
