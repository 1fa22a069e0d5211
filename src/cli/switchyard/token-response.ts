import { CliError } from "./cli-error";
import type { StoredCredential } from "./credential-store";

/** Access-token lifetime assumed when the token endpoint does not say (RFC 6749 §5.1 makes expires_in optional). */
export const DEFAULT_TOKEN_LIFETIME_S = 3600;

interface TokenResponseBody {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  scope?: unknown;
  namespace_id?: unknown;
  account_id?: unknown;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function expiresAt(body: TokenResponseBody, now: number): string {
  const seconds = typeof body.expires_in === "number" && Number.isFinite(body.expires_in) && body.expires_in > 0 ? body.expires_in : DEFAULT_TOKEN_LIFETIME_S;
  return new Date(now + seconds * 1000).toISOString();
}

/** The credential a device-flow token response grants; every identity field must be there. */
export function credentialFromLogin(raw: unknown, server: string, requestedScope: string, now = Date.now()): StoredCredential {
  const body = (raw ?? {}) as TokenResponseBody;
  const accessToken = text(body.access_token);
  const refreshToken = text(body.refresh_token);
  const namespaceId = text(body.namespace_id);
  const accountId = text(body.account_id);
  if (!accessToken || !refreshToken || !namespaceId || !accountId) {
    throw new CliError("the server's token response lacks access_token, refresh_token, namespace_id or account_id");
  }
  return {
    access_token: accessToken,
    refresh_token: refreshToken,
    expires_at: expiresAt(body, now),
    // RFC 6749 §5.1: scope may be omitted when it is what was requested.
    scope: typeof body.scope === "string" ? body.scope : requestedScope,
    namespace_id: namespaceId,
    account_id: accountId,
    server,
  };
}

/**
 * The credential after a refresh: a new access token, the rotated refresh token when the
 * server sent one, and the same namespace and account (a binding never changes on
 * refresh, so a namespace_id in the answer is ignored).
 */
export function credentialFromRefresh(raw: unknown, previous: StoredCredential, now = Date.now()): StoredCredential {
  const body = (raw ?? {}) as TokenResponseBody;
  const accessToken = text(body.access_token);
  if (!accessToken) throw new CliError("the server's refresh answer has no access_token");
  return {
    ...previous,
    access_token: accessToken,
    refresh_token: text(body.refresh_token) ?? previous.refresh_token,
    expires_at: expiresAt(body, now),
    scope: typeof body.scope === "string" ? body.scope : previous.scope,
  };
}
