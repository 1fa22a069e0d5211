import { ERROR_TABLE, type OauthErrorCode } from "../errors/error-table";


/**
 * An OAuth protocol error: `{ error, error_description }`. Its status is the error table's
 * (src/errors/error-table.ts) for its code (400), or `unauthorized` (401, with a
 * `WWW-Authenticate` challenge) for a client that failed to authenticate through the
 * Authorization header, as RFC 6749 §5.2 requires.
 */
export class OauthError extends Error {
  readonly status: number;
  constructor(
    readonly code: OauthErrorCode,
    readonly description: string,
    readonly kind: "bad_request" | "unauthorized" = "bad_request",
  ) {
    super(description);
    this.name = "OauthError";
    this.status = kind === "unauthorized" ? ERROR_TABLE.authentication.status : ERROR_TABLE[code].status;
  }

  body(): { error: OauthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

export function oauthErrorResponse(error: OauthError): Response {
  const headers: Record<string, string> = { "content-type": "application/json", "cache-control": "no-store" };
  if (error.kind === "unauthorized") headers["www-authenticate"] = 'Basic realm="switchyard"';
  return new Response(JSON.stringify(error.body()), { status: error.status, headers });
}

/** A JSON body the token endpoints answer with: never cached (RFC 6749 §5.1). */
export function oauthJsonResponse(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" } });
}
