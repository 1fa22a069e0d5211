import { findOauthGrantByToken } from "../../db/queries/oauth-tokens";
import { sha256 } from "../../auth/tokens";
import { revokeCredential } from "../credential-revocation";
import { authenticateClient } from "./client-authentication";
import type { OauthDeps } from "./oauth-deps";
import { requireParam } from "./oauth-params";

/**
 * `POST /oauth/revoke` (RFC 7009). The token may be the access or the refresh token of
 * a grant (`token_type_hint` only says which is likelier, and both are looked up at once):
 * either revokes the whole grant (credential-revocation.ts), on this instance's credential
 * cache at once. Only the
 * client the grant was issued to may revoke it. An unknown token, or another client's,
 * is answered like a revoked one (200), so the endpoint tells nobody which tokens exist.
 */
export async function revokeToken(deps: OauthDeps, params: Map<string, string>, headers: Headers): Promise<void> {
  const client = await authenticateClient(deps.sql, params, headers);
  const token = requireParam(params, "token");
  const grant = await findOauthGrantByToken(deps.sql, sha256(token));
  if (!grant || grant.client_id !== client.clientId) return;
  await revokeCredential(deps, { kind: "oauth_grant", id: grant.id });
}
