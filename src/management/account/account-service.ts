import { findLiveAccount, updateAccountDisplayName, type AccountProfileRow } from "../../db/queries/accounts";
import { deleteAccount } from "../../db/queries/account-deletion";
import { notFound } from "../../errors/api-error";
import type { Services } from "../../services";

/** GET /v1/account and PATCH's answer. */
export interface AccountEnvelope {
  id: string;
  email: string;
  display_name: string | null;
  created_at: string;
}

function envelope(row: AccountProfileRow): AccountEnvelope {
  return { id: row.id, email: row.email, display_name: row.display_name, created_at: row.created_at.toISOString() };
}

export type AccountDeps = Pick<Services, "db" | "credentials" | "byokKeys" | "policies">;

export async function readAccount(deps: AccountDeps, accountId: string): Promise<AccountEnvelope> {
  const row = await findLiveAccount(deps.db.sql, accountId);
  if (!row) throw notFound("account");
  return envelope(row);
}

/** `displayName` undefined leaves it as it is; null clears it. */
export async function updateAccount(deps: AccountDeps, accountId: string, displayName: string | null | undefined): Promise<AccountEnvelope> {
  if (displayName === undefined) return readAccount(deps, accountId);
  const row = await updateAccountDisplayName(deps.db.sql, accountId, displayName);
  if (!row) throw notFound("account");
  return envelope(row);
}

/**
 * Deletes the account (README "Accounts"): everything in one transaction, then this
 * instance's caches forget every credential, BYOK key and policy it held, so none works
 * here from the next request on; other instances stop honouring them within
 * CREDENTIAL_CACHE_TTL_MS, and their next look-up finds them revoked.
 */
export async function removeAccount(deps: AccountDeps, accountId: string): Promise<{ deleted: true }> {
  const deleted = await deleteAccount(deps.db.sql, accountId);
  if (!deleted) throw notFound("account");
  for (const id of deleted.revokedKeyIds) deps.credentials.invalidate(id);
  for (const id of deleted.revokedGrantIds) deps.credentials.invalidate(id);
  for (const provider of deleted.byokProviders) deps.byokKeys.invalidate(accountId, provider);
  for (const id of deleted.policyIds) deps.policies.policyChanged(id);
  return { deleted: true };
}
