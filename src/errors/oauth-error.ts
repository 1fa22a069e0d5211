import { ERROR_TABLE, type OauthErrorKind } from "./error-table";
import type { ApiError } from "./api-error";

/**
 * An OAuth protocol error's body (RFC 6749 §5.2): `{ error, error_description }`, the
 * error the kind's OAuth name in the error table (src/errors/error-table.ts).
 */
export function oauthErrorBody(error: ApiError<OauthErrorKind>): { error: string; error_description: string } {
  return { error: ERROR_TABLE[error.kind].oauth, error_description: error.message };
}

/**
 * A token, device authorization or revocation endpoint's error answer, never cached. Its
 * status is the error's: 400, or 401 with a `WWW-Authenticate` challenge for a client that
 * failed to authenticate through the Authorization header, as RFC 6749 §5.2 requires.
 */
export function oauthErrorResponse(error: ApiError<OauthErrorKind>): Response {
  const headers: Record<string, string> = { "content-type": "application/json", "cache-control": "no-store" };
  if (error.status === 401) headers["www-authenticate"] = 'Basic realm="switchyard"';
  return new Response(JSON.stringify(oauthErrorBody(error)), { status: error.status, headers });
}

/** A JSON body the token endpoints answer with: never cached (RFC 6749 §5.1). */
export function oauthJsonResponse(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" } });
}
