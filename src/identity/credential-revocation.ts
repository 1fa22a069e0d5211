import type { Sql } from "../db/connect-database";
import { revokeAccountWideKey, revokeNamespaceKey } from "../db/queries/api-keys";
import { revokeNamespaceOauthGrant } from "../db/queries/oauth-grants";
import { revokeOauthGrant } from "../db/queries/oauth-tokens";
import type { CredentialResolver } from "./credential-resolver";

/** What revoking needs: the database, and this instance's credential cache. */
export interface RevocationDeps {
  sql: Sql;
  credentials: Pick<CredentialResolver, "invalidate">;
}

/** Whose a credential must be for a management call to revoke it; anything else is "not found". */
export interface CredentialOwner {
  accountId: string;
  /** A namespace's key or grant; null for an account-wide key. */
  namespaceId: string | null;
}

/**
 * A credential to revoke: an API key, always named with its owner (a namespace's key or
 * an account-wide one), or an OAuth grant, named with its namespace by the management
 * API, or alone where the caller already proved it may (the grant's own client at
 * `/oauth/revoke`, a replayed refresh token or authorization code).
 */
export type RevokedCredential =
  | { kind: "api_key"; id: string; owner: CredentialOwner }
  | { kind: "oauth_grant"; id: string; owner?: CredentialOwner & { namespaceId: string } };

/** Marks the credential's row revoked; false when it is not the owner's, or not live. */
async function revokeRow(sql: Sql, credential: RevokedCredential): Promise<boolean> {
  if (credential.kind === "api_key") {
    const { id, owner } = credential;
    return owner.namespaceId === null ? revokeAccountWideKey(sql, id, owner.accountId) : revokeNamespaceKey(sql, id, owner.namespaceId, owner.accountId);
  }
  const { id, owner } = credential;
  if (owner) return revokeNamespaceOauthGrant(sql, id, owner.namespaceId, owner.accountId);
  await revokeOauthGrant(sql, id);
  return true;
}

/**
 * The one way a credential is revoked, whoever asks (the keys and grants routes, the
 * console, `/oauth/revoke`, a replayed refresh token or authorization code): its row is
 * revoked, then every cache of it on this instance forgets it, and the keys minted
 * through it, so it fails from the next request on here (and on the other instances
 * within CREDENTIAL_CACHE_TTL_MS). Runs after any transaction that decided it, so no
 * request can cache the credential as it was before the revocation committed. Answers
 * whether it was the owner's and live.
 */
export async function revokeCredential(deps: RevocationDeps, credential: RevokedCredential): Promise<boolean> {
  const revoked = await revokeRow(deps.sql, credential);
  if (revoked) forgetCredentials(deps, [credential.id]);
  return revoked;
}

/**
 * Drops credentials from this instance's cache whose rows already changed: the ones
 * revoked along with something else (a namespace, a client, an account) and a grant
 * whose access token a refresh replaced.
 */
export function forgetCredentials(deps: Pick<RevocationDeps, "credentials">, ...idLists: readonly string[][]): void {
  for (const ids of idLists) for (const id of ids) deps.credentials.invalidate(id);
}
