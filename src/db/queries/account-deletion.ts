import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

/** What deleting an account destroyed, for the caches of this instance to forget at once. */
export interface DeletedAccount {
  revokedKeyIds: string[];
  revokedGrantIds: string[];
  byokProviders: string[];
  policyIds: string[];
}

/**
 * Deletes an account in one transaction: every API key and OAuth grant revoked, its
 * pending device and authorization codes, BYOK keys, OAuth clients, policies and
 * console sessions gone, every namespace archived (the last one too), and the row
 * tombstoned with its email freed. Undefined when there is no such live account.
 */
export function deleteAccount(sql: Sql, accountId: string): Promise<DeletedAccount | undefined> {
  return sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    const locked = await runQuery<{ id: string }>(tx, "lockLiveAccount", [accountId]);
    if (locked.length === 0) return undefined;
    await runQuery(tx, "lockAccountKeys", [accountId]);
    const keys = await runQuery<{ id: string }>(tx, "revokeAccountKeys", [accountId]);
    const grants = await runQuery<{ id: string }>(tx, "revokeAccountOauthGrants", [accountId]);
    await runQuery(tx, "deleteAccountDeviceCodes", [accountId]);
    await runQuery(tx, "deleteAccountAuthorizationCodes", [accountId]);
    const byok = await runQuery<{ provider_name: string }>(tx, "deleteAccountByokKeys", [accountId]);
    await runQuery(tx, "archiveAccountNamespaces", [accountId]);
    await runQuery(tx, "destroyAccountOauthClients", [accountId]);
    await runQuery(tx, "destroyAccountPolicyBindings", [accountId]);
    const policies = await runQuery<{ id: string }>(tx, "destroyAccountPolicies", [accountId]);
    await runQuery(tx, "deleteAccountConsoleSessions", [accountId]);
    await runQuery(tx, "tombstoneAccount", [accountId]);
    return {
      revokedKeyIds: keys.map((row) => row.id),
      revokedGrantIds: grants.map((row) => row.id),
      byokProviders: byok.map((row) => row.provider_name),
      policyIds: policies.map((row) => row.id),
    };
  });
}
