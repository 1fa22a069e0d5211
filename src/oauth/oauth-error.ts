/**
 * The error codes of the token, device authorization and revocation endpoints
 * (RFC 6749 §5.2, RFC 8628 §3.5, RFC 7009 §2.2.1).
 */
export type OauthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "authorization_pending"
  | "slow_down"
  | "access_denied"
  | "expired_token";

/**
 * An OAuth protocol error: `{ error, error_description }` with HTTP 400, except a client
 * that failed to authenticate through the Authorization header, which gets 401 and a
 * `WWW-Authenticate` challenge as RFC 6749 §5.2 requires.
 */
export class OauthError extends Error {
  constructor(
    readonly code: OauthErrorCode,
    readonly description: string,
    readonly status: 400 | 401 = 400,
  ) {
    super(description);
    this.name = "OauthError";
  }
}

export function oauthErrorResponse(error: OauthError): Response {
  const headers: Record<string, string> = { "content-type": "application/json", "cache-control": "no-store" };
  if (error.status === 401) headers["www-authenticate"] = 'Basic realm="switchyard"';
  return new Response(JSON.stringify({ error: error.code, error_description: error.description }), { status: error.status, headers });
}

/** A JSON body the token endpoints answer with: never cached (RFC 6749 §5.1). */
export function oauthJsonResponse(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" } });
}
