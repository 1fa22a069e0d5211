import type { Sql } from "../../db/connect-database";
import { consumeAuthorizationCode, lockAuthorizationCode } from "../../db/queries/oauth-authorization-codes";
import { sha256 } from "../../auth/tokens";
import { revokeCredential } from "../credential-revocation";
import type { OauthClient } from "./oauth-client";
import { ApiError } from "../../errors/api-error";
import type { OauthDeps } from "./oauth-deps";
import { issueGrant, type TokenResponse } from "./grant-issuer";
import { requireParam } from "./oauth-params";
import { verifyS256 } from "./pkce";

type ExchangeOutcome = { tokens: TokenResponse } | { error: ApiError; revokedGrantId?: string };

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6): the code's own
 * client, the same redirect URI character for character, and the PKCE verifier when the
 * request carried a challenge. A code works once: a second exchange revokes the grant
 * the first one made (RFC 6749 §4.1.2, through credential-revocation.ts once the
 * transaction that found the reuse is over), since one of the two holders stole it.
 */
export async function exchangeAuthorizationCode(deps: OauthDeps, client: OauthClient, params: Map<string, string>): Promise<TokenResponse> {
  const codeHash = sha256(requireParam(params, "code"));
  const redirectUri = requireParam(params, "redirect_uri");
  const verifier = params.get("code_verifier");
  const outcome = await deps.sql.begin(async (transaction): Promise<ExchangeOutcome> => {
    const tx = transaction as unknown as Sql;
    const code = await lockAuthorizationCode(tx, codeHash);
    if (!code || code.client_id !== client.clientId) return { error: new ApiError("invalid_grant", "unknown authorization code") };
    if (code.consumed_at !== null) {
      if (code.grant_id === null) return { error: new ApiError("invalid_grant", "this authorization code was already used") };
      return { error: new ApiError("invalid_grant", "this authorization code was already used; its tokens are revoked"), revokedGrantId: code.grant_id };
    }
    if (code.expires_at.getTime() <= Date.now()) return { error: new ApiError("invalid_grant", "the authorization code expired") };
    if (code.redirect_uri !== redirectUri) return { error: new ApiError("invalid_grant", "redirect_uri differs from the authorization request's") };
    if (code.code_challenge !== null) {
      if (verifier === undefined) return { error: new ApiError("invalid_request", "missing parameter: code_verifier") };
      if (!verifyS256(verifier, code.code_challenge)) return { error: new ApiError("invalid_grant", "code_verifier does not match the code_challenge") };
    } else if (verifier !== undefined) {
      return { error: new ApiError("invalid_grant", "the authorization request carried no code_challenge") };
    }
    if (code.namespace_archived || code.account_deleted) return { error: new ApiError("invalid_grant", "the grant's namespace or account is gone") };
    const { grantId, response } = await issueGrant(
      tx,
      { accountId: code.account_id, namespaceId: code.namespace_id, clientId: client.clientId, oauthClientRef: client.ref, scopes: code.scopes },
      deps.lifetimes,
    );
    await consumeAuthorizationCode(tx, codeHash, grantId);
    return { tokens: response };
  });
  if ("error" in outcome) {
    if (outcome.revokedGrantId !== undefined) await revokeCredential(deps, { kind: "oauth_grant", id: outcome.revokedGrantId });
    throw outcome.error;
  }
  return outcome.tokens;
}
