import type { Sql } from "../../db/connect-database";
import { findRotatedRefreshToken, lockOauthGrantByRefreshToken, rotateOauthGrant } from "../../db/queries/oauth-tokens";
import { firstScopeNotHeld, hasScope, isValidScope } from "../../auth/scopes";
import { sha256 } from "../../auth/tokens";
import { forgetCredentials, revokeCredential } from "../credential-revocation";
import type { OauthClient } from "./oauth-client";
import { ApiError } from "../../errors/api-error";
import type { OauthDeps } from "./oauth-deps";
import { tokenExpiries, tokenResponse, type TokenResponse } from "./grant-issuer";
import { mintAccessToken, mintRefreshToken } from "./oauth-secrets";
import { requireParam } from "./oauth-params";

type RefreshOutcome = { tokens: TokenResponse; grantId: string } | { error: ApiError; revokedGrantId?: string };

/** The `scope` of a refresh, if any: it may only narrow what the grant holds (RFC 6749 §6). */
function narrowedScopes(scope: string | undefined, held: readonly string[]): string[] | ApiError {
  if (scope === undefined) return [...held];
  const requested = [...new Set(scope.split(" ").filter((name) => name !== ""))];
  if (!requested.every(isValidScope)) return new ApiError("invalid_scope", "unknown scope requested");
  const extra = firstScopeNotHeld(held, requested);
  if (extra !== undefined) return new ApiError("invalid_scope", `a refresh cannot add scope ${extra}`);
  const narrowed = held.filter((name) => hasScope(requested, name));
  return narrowed.length > 0 ? narrowed : new ApiError("invalid_scope", "no scope left");
}

/**
 * `grant_type=refresh_token`: a new access token and a new refresh token for the same
 * grant (same id, same namespace), the old refresh token remembered as rotated out.
 * Presenting a rotated-out refresh token means it was copied: the grant is revoked
 * (RFC 6819 §5.2.2.3, through credential-revocation.ts once the transaction that found
 * the replay is over) and both holders must sign in again.
 */
export async function refreshGrant(deps: OauthDeps, client: OauthClient, params: Map<string, string>): Promise<TokenResponse> {
  const presented = sha256(requireParam(params, "refresh_token"));
  const outcome = await deps.sql.begin(async (transaction): Promise<RefreshOutcome> => {
    const tx = transaction as unknown as Sql;
    const grant = await lockOauthGrantByRefreshToken(tx, presented);
    if (!grant) {
      const rotatedFrom = await findRotatedRefreshToken(tx, presented);
      if (rotatedFrom === undefined) return { error: new ApiError("invalid_grant", "unknown refresh token") };
      return { error: new ApiError("invalid_grant", "this refresh token was already used; the grant is revoked"), revokedGrantId: rotatedFrom };
    }
    if (grant.client_id !== client.clientId) return { error: new ApiError("invalid_grant", "unknown refresh token") };
    if (grant.revoked_at || grant.namespace_archived || grant.account_deleted) return { error: new ApiError("invalid_grant", "the grant was revoked") };
    const now = Date.now();
    if (grant.refresh_expires_at !== null && grant.refresh_expires_at.getTime() <= now) return { error: new ApiError("invalid_grant", "the refresh token expired") };
    // What the client may be given today bounds the grant: narrowing its allowed_scopes
    // narrows its live grants here, at their next refresh.
    const held = grant.scopes.filter((name) => hasScope(client.allowedScopes, name));
    if (held.length === 0) return { error: new ApiError("invalid_grant", "the client may no longer be given any of the grant's scopes") };
    const scopes = narrowedScopes(params.get("scope"), held);
    if (scopes instanceof ApiError) return { error: scopes };
    const access = mintAccessToken();
    const refresh = mintRefreshToken();
    await rotateOauthGrant(tx, {
      grantId: grant.id,
      oldRefreshTokenHash: presented,
      accessTokenHash: access.hash,
      refreshTokenHash: refresh.hash,
      scopes,
      ...tokenExpiries(deps.lifetimes, now),
    });
    const terms = { accountId: grant.account_id, namespaceId: grant.namespace_id, scopes };
    return { tokens: tokenResponse(terms, access, refresh, deps.lifetimes), grantId: grant.id };
  });
  if ("error" in outcome) {
    if (outcome.revokedGrantId !== undefined) await revokeCredential(deps, { kind: "oauth_grant", id: outcome.revokedGrantId });
    throw outcome.error;
  }
  // The previous access token is no longer the grant's: this instance stops accepting it now.
  forgetCredentials(deps, [outcome.grantId]);
  return outcome.tokens;
}
