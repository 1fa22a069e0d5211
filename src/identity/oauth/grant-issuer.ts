import type { Sql } from "../../db/connect-database";
import type { OauthLifetimes } from "../../config";
import { newId } from "../../ids";
import { OAUTH_GRANT_ID_PREFIX } from "../last-used-tracker";
import { insertOauthGrant } from "../../db/queries/oauth-tokens";
import { mintAccessToken, mintRefreshToken, type MintedSecret } from "./oauth-secrets";

/** The token endpoint's success body (RFC 6749 §5.1, with the grant's namespace and account). */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  refresh_token_expires_in: number;
  scope: string;
  namespace_id: string;
  account_id: string;
}

/** What an approval (a device decision, a consent) grants to one client. */
export interface GrantTerms {
  accountId: string;
  namespaceId: string;
  clientId: string;
  oauthClientRef: string | null;
  scopes: readonly string[];
}

export function tokenResponse(terms: Omit<GrantTerms, "clientId" | "oauthClientRef">, access: MintedSecret, refresh: MintedSecret, lifetimes: OauthLifetimes): TokenResponse {
  return {
    access_token: access.value,
    token_type: "Bearer",
    expires_in: lifetimes.accessTokenSecs,
    refresh_token: refresh.value,
    refresh_token_expires_in: lifetimes.refreshTokenSecs,
    scope: terms.scopes.join(" "),
    namespace_id: terms.namespaceId,
    account_id: terms.accountId,
  };
}

/** Expiries of a fresh access and refresh token. */
export function tokenExpiries(lifetimes: OauthLifetimes, now = Date.now()): { expiresAt: Date; refreshExpiresAt: Date } {
  return { expiresAt: new Date(now + lifetimes.accessTokenSecs * 1000), refreshExpiresAt: new Date(now + lifetimes.refreshTokenSecs * 1000) };
}

/**
 * Creates a grant (one oauth_tokens row, its id `og_…`) with its first access and
 * refresh token, in the caller's transaction; returns its id and the token response.
 */
export async function issueGrant(tx: Sql, terms: GrantTerms, lifetimes: OauthLifetimes): Promise<{ grantId: string; response: TokenResponse }> {
  const grantId = newId(OAUTH_GRANT_ID_PREFIX.slice(0, -1));
  const access = mintAccessToken();
  const refresh = mintRefreshToken();
  await insertOauthGrant(tx, {
    id: grantId,
    accountId: terms.accountId,
    namespaceId: terms.namespaceId,
    clientId: terms.clientId,
    oauthClientRef: terms.oauthClientRef,
    accessTokenHash: access.hash,
    refreshTokenHash: refresh.hash,
    scopes: terms.scopes,
    ...tokenExpiries(lifetimes),
  });
  return { grantId, response: tokenResponse(terms, access, refresh, lifetimes) };
}
