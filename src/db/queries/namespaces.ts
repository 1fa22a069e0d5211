import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

export interface NamespaceRow {
  id: string;
  name: string;
  created_at: Date;
}

export async function insertNamespace(sql: Sql, id: string, accountId: string, name: string): Promise<NamespaceRow> {
  const [row] = await runQuery<NamespaceRow>(sql, "insertNamespace", [id, accountId, name]);
  return row!;
}

export function listLiveNamespaces(sql: Sql, accountId: string): Promise<NamespaceRow[]> {
  return runQuery<NamespaceRow>(sql, "listLiveNamespaces", [accountId]);
}

export async function findLiveNamespace(sql: Sql, namespaceId: string, accountId: string): Promise<NamespaceRow | undefined> {
  return runQueryRow<NamespaceRow>(sql, "findLiveNamespace", [namespaceId, accountId]);
}

export async function oldestLiveNamespace(sql: Sql, accountId: string): Promise<string | undefined> {
  return (await runQueryRow<{ id: string }>(sql, "oldestLiveNamespace", [accountId]))?.id;
}

export type ArchiveOutcome = { outcome: "archived"; revokedKeyIds: string[]; destroyedGrantIds: string[] } | { outcome: "not_found" } | { outcome: "last_namespace" };

/**
 * Archiving a namespace, in one transaction: archived; its keys, OAuth grants, the
 * device and authorization codes approved for it, OAuth clients, policies and its own
 * BYOK keys destroyed (the grant ids returned, for the credential cache); usage history
 * detached (request rows keep the id of an archived namespace no listing can reach); the
 * wallet and the account's BYOK keys, which belong to the account, kept.
 */
export function archiveNamespace(sql: Sql, namespaceId: string, accountId: string): Promise<ArchiveOutcome> {
  return sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    const live = await runQuery<{ id: string }>(tx, "countLiveNamespacesForUpdate", [accountId]);
    if (!live.some((row) => row.id === namespaceId)) return { outcome: "not_found" } as const;
    if (live.length <= 1) return { outcome: "last_namespace" } as const;
    await runQuery(tx, "archiveNamespace", [namespaceId, accountId]);
    await runQuery(tx, "lockNamespaceKeys", [namespaceId]);
    const keys = await runQuery<{ id: string }>(tx, "destroyNamespaceKeys", [namespaceId]);
    await runQuery(tx, "lockNamespaceOauthTokens", [namespaceId]);
    const grants = await runQuery<{ id: string }>(tx, "destroyNamespaceOauthTokens", [namespaceId]);
    await runQuery(tx, "destroyNamespaceDeviceCodes", [namespaceId]);
    await runQuery(tx, "destroyNamespaceAuthorizationCodes", [namespaceId]);
    await runQuery(tx, "destroyNamespaceOauthClients", [namespaceId]);
    await runQuery(tx, "destroyNamespacePolicyBindings", [namespaceId]);
    await runQuery(tx, "destroyNamespacePolicies", [namespaceId]);
    await runQuery(tx, "destroyNamespaceByokKeys", [namespaceId]);
    return { outcome: "archived", revokedKeyIds: keys.map((row) => row.id), destroyedGrantIds: grants.map((row) => row.id) } as const;
  });
}
