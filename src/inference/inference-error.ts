import { irError, type IrError, type ProtocolId } from "../ir";
import { ApiError } from "../errors/api-error";
import { codecFor } from "../translation/codec-registry";

/** Renders an IrError as a response in the client's protocol (reference §1.4). */
export function errorInProtocol(protocol: ProtocolId, error: IrError, requestId: string): Response {
  // A 429 always says when to come back; 1 s when nobody told us.
  if (error.status === 429 && error.retryAfter === undefined) error = { ...error, retryAfter: 1 };
  const rendered = codecFor(protocol).encodeError(error);
  // The codecs render Retry-After only on 429; a 503 we raise ourselves (billing or
  // credentials unavailable) says when to come back as well.
  const retry = rendered.status === 503 && error.retryAfter !== undefined ? { "retry-after": String(Math.ceil(error.retryAfter)) } : {};
  return new Response(JSON.stringify(rendered.body), {
    status: rendered.status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...retry, ...rendered.headers },
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
