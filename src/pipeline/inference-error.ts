import { irError, type IrError, type ProtocolId } from "../ir";
import { ApiError } from "../errors/api-error";
import { isIrError } from "../routing/body-reader";
import { WorkerCrashedError } from "../workers";
import { codecFor } from "../translation/codec-registry";
import { log } from "../observability/log";

/** Renders an IrError as a response in the client's protocol. */
export function errorInProtocol(protocol: ProtocolId, error: IrError, requestId: string): Response {
  // A 429 always says when to come back; 1 s when nobody told us.
  if (error.status === 429 && error.retryAfter === undefined) error = { ...error, retryAfter: 1 };
  const rendered = codecFor(protocol).encodeError(error);
  return new Response(JSON.stringify(rendered.body), {
    status: rendered.status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...rendered.headers },
  });
}

/** Credential and management errors (shared auth code) mapped into the inference error table. */
export function irErrorFromApiError(error: ApiError): IrError {
  switch (error.code) {
    case "unauthorized":
      return irError("authentication", error.description);
    case "forbidden":
      return irError("permission_denied", error.description);
    case "payment_required":
      return irError("payment_required", error.description);
    case "not_found":
      return irError("not_found", error.description);
    case "too_many_requests":
      return irError("rate_limited", error.description);
    case "payload_too_large":
      return irError("payload_too_large", error.description);
    case "bad_request":
    case "conflict":
      return irError("invalid_request", error.description);
    default:
      return irError("internal", "internal error");
  }
}

/** A value thrown on the inference path: IrErrors as they are, a crashed translation worker as our own 500, anything else as `otherwise`. */
export function asIrError(error: unknown, otherwise: IrError): IrError {
  if (isIrError(error)) return error;
  if (error instanceof WorkerCrashedError) return irError("internal", "translation worker failed; please retry");
  return otherwise;
}

/** An unexpected failure on the inference path: logged (never the request's content) and answered as a 500, or as the IrError it already is. */
export function internalError(error: unknown, requestId: string): IrError {
  log.error("inference failed", { requestId, error: error instanceof Error ? error.message : String(error) });
  return asIrError(error, irError("internal", "internal error"));
}
