import { findLiveAccount, updateAccountDisplayName, type AccountProfileRow } from "../../db/queries/accounts";
import { deleteAccount } from "../../db/queries/account-deletion";
import { notFound } from "../../errors/api-error";
import type { Services } from "../../services";
import { forgetCredentials } from "../../identity/credential-revocation";

/** GET /v1/account and PATCH's answer. */
export interface AccountEnvelope {
  id: string;
  email: string;
  display_name: string | null;
  created_at: string;
}

/** A live account as the console shows it. */
export interface Account {
  id: string;
  email: string;
  displayName: string | null;
  createdAt: Date;
}

function accountOf(row: AccountProfileRow): Account {
  return { id: row.id, email: row.email, displayName: row.display_name, createdAt: row.created_at };
}

function envelope(account: Account): AccountEnvelope {
  return { id: account.id, email: account.email, display_name: account.displayName, created_at: account.createdAt.toISOString() };
}

/** What the account service uses: the database, and every cache a deleted account must leave. */
export type AccountServiceDeps = Pick<Services, "db" | "credentials" | "me" | "byokKeys" | "policies">;

/** The live account, or undefined once it is deleted. */
export async function findAccount(deps: AccountServiceDeps, accountId: string): Promise<Account | undefined> {
  const row = await findLiveAccount(deps.db.sql, accountId);
  return row === undefined ? undefined : accountOf(row);
}

export async function readAccount(deps: AccountServiceDeps, accountId: string): Promise<AccountEnvelope> {
  const account = await findAccount(deps, accountId);
  if (!account) throw notFound("account");
  return envelope(account);
}

/** `displayName` undefined leaves it as it is; null clears it. */
export async function updateAccount(deps: AccountServiceDeps, accountId: string, displayName: string | null | undefined): Promise<AccountEnvelope> {
  if (displayName === undefined) return readAccount(deps, accountId);
  const row = await updateAccountDisplayName(deps.db.sql, accountId, displayName);
  if (!row) throw notFound("account");
  return envelope(accountOf(row));
}

/**
 * Deletes the account (docs/api/identity.md "Accounts"): everything in one transaction, then this
 * instance's caches forget every credential, BYOK key and policy it held (and its `me`), so none works
 * here from the next request on; other instances stop honouring them within
 * CREDENTIAL_CACHE_TTL_MS, and their next look-up finds them revoked.
 */
export async function removeAccount(deps: AccountServiceDeps, accountId: string): Promise<{ deleted: true }> {
  const deleted = await deleteAccount(deps.db.sql, accountId);
  if (!deleted) throw notFound("account");
  forgetCredentials(deps, deleted.revokedKeyIds, deleted.revokedGrantIds);
  deps.me.forget(accountId);
  for (const provider of deleted.byokProviders) deps.byokKeys.invalidate(accountId, provider);
  for (const id of deleted.policyIds) deps.policies.policyChanged(id);
  return { deleted: true };
}
