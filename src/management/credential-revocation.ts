import { notFound } from "../errors/api-error";
import type { Services } from "../services";

export type CredentialRevocationDeps = Pick<Services, "credentials">;

/**
 * Revokes one credential (an API key, an OAuth grant) and then drops it from this
 * instance's credential cache, so it stops working here from the next request on (and on
 * the others within CREDENTIAL_CACHE_TTL_MS). `revoke` answers whether the credential
 * was the tenant's and live; anything else is the 404 of a missing `what`.
 */
export async function revokeCredential(deps: CredentialRevocationDeps, id: string, what: string, revoke: () => Promise<boolean>): Promise<{ revoked: true }> {
  if (!(await revoke())) throw notFound(what);
  deps.credentials.invalidate(id);
  return { revoked: true };
}

/** Drops credentials revoked along with something else (a namespace, a client, an account) from this instance's cache. */
export function forgetCredentials(deps: CredentialRevocationDeps, ...idLists: readonly string[][]): void {
  for (const ids of idLists) for (const id of ids) deps.credentials.invalidate(id);
}
