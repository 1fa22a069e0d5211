import { irError, type IrError, type ProtocolId } from "../ir";
import { ApiError } from "../errors/api-error";
import { authenticate, requireScope, type AuthDeps } from "../auth/auth-plugin";
import type { Principal } from "../auth/principal";
import { isIrError } from "../routing/body-reader";
import { WorkerCrashedError } from "../workers";
import { log } from "../observability/log";
import { codecFor } from "../translation/codec-registry";

/** Renders an IrError as a response in the client's protocol (reference §1.4). */
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

/**
 * The caller of an inference endpoint, or the error to answer with: 401/403 from the
 * credential, or 503 when the credential cannot be checked (database unreachable and
 * the key not cached) — the same fail-closed answer as admission.
 */
export async function authorizeInference(services: AuthDeps, headers: Headers, requestId: string): Promise<{ principal: Principal } | { error: IrError }> {
  try {
    const principal = await authenticate(services, headers);
    requireScope(principal, "inference:invoke");
    return { principal };
  } catch (error) {
    if (error instanceof ApiError) return { error: irErrorFromApiError(error) };
    log.error("authentication unavailable", { requestId, error: error instanceof Error ? error.message : String(error) });
    return { error: irError("internal", "authentication is temporarily unavailable; retry shortly", { status: 503, retryAfter: 1 }) };
  }
}

/** A value thrown on the inference path: IrErrors as they are, a crashed translation worker as our own 500, anything else as `otherwise`. */
export function asIrError(error: unknown, otherwise: IrError): IrError {
  if (isIrError(error)) return error;
  if (error instanceof WorkerCrashedError) return irError("internal", "translation worker failed; please retry");
  return otherwise;
}
