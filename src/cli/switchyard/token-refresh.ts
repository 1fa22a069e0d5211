import { CliError, notSignedIn } from "./cli-error";
import type { CredentialStore, StoredCredential } from "./credential-store";
import { errorDescription, oauthErrorCode, sendRequest } from "./http-client";
import { CLI_CLIENT_ID, discoverOauthEndpoints } from "./oauth-metadata";
import { credentialFromRefresh } from "./token-response";

/** An access token this close to its expiry is refreshed before use. */
export const REFRESH_MARGIN_MS = 60_000;

export function expiresSoon(credential: StoredCredential, now = Date.now()): boolean {
  const expiry = Date.parse(credential.expires_at);
  return Number.isNaN(expiry) || expiry - now < REFRESH_MARGIN_MS;
}

/**
 * Trades the stored refresh token for a new access token (RFC 6749 §6) and stores the
 * result. `staleAccessToken` is the one the caller found wanting (expiring, or refused
 * with 401). Runs under the credential lock; if by then the file holds a different,
 * fresh access token, another command refreshed first and its result is used as is,
 * rather than presenting a refresh token that was just rotated out.
 */
export async function refreshStoredCredential(store: CredentialStore, staleAccessToken: string): Promise<StoredCredential> {
  return store.withLock(async () => {
    const current = store.read();
    if (!current) throw notSignedIn();
    if (current.access_token !== staleAccessToken && !expiresSoon(current)) return current;
    const endpoints = await discoverOauthEndpoints(current.server);
    const response = await sendRequest(current.server, {
      method: "POST",
      path: endpoints.token,
      form: { grant_type: "refresh_token", refresh_token: current.refresh_token, client_id: CLI_CLIENT_ID },
    });
    if (response.status === 200) {
      const next = credentialFromRefresh(response.body, current);
      store.write(next);
      return next;
    }
    if (oauthErrorCode(response) === "invalid_grant") {
      throw notSignedIn(`your sign-in has expired or was revoked (${errorDescription(response)})`);
    }
    throw new CliError(`refreshing the access token failed: ${errorDescription(response)}`);
  });
}
