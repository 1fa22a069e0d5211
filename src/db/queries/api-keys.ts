import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

export interface ApiKeyRow {
  id: string;
  display_name: string;
  key_prefix: string;
  scopes: string[];
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

export interface ApiKeyAuthRow {
  id: string;
  account_id: string;
  namespace_id: string | null;
  token_hash: Uint8Array;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  /** The keys that minted this one, nearest first; empty for a key nobody's key minted. */
  ancestor_key_ids: string[];
  /** The OAuth grant whose token minted the root of the chain, if one did. */
  ancestor_grant_id: string | null;
  /** That grant's registered client, if it has one. */
  ancestor_client_id: string | null;
  /** An ancestor is revoked, expired or gone: the key no longer authenticates. */
  ancestor_dead: boolean;
}

export interface NewApiKey {
  id: string;
  accountId: string;
  namespaceId: string | null;
  displayName: string;
  keyPrefix: string;
  tokenHash: Uint8Array;
  scopes: string[];
  expiresAt: Date | null;
  /** The key, or the OAuth grant of the access token, that minted this one. */
  parentApiKeyId?: string | null;
  parentOauthGrantId?: string | null;
}

export async function insertApiKey(sql: Sql, key: NewApiKey): Promise<ApiKeyRow> {
  const [row] = await runQuery<ApiKeyRow>(sql, "insertApiKey", [
    key.id,
    key.accountId,
    key.namespaceId,
    key.displayName,
    key.keyPrefix,
    key.tokenHash,
    key.scopes,
    key.expiresAt,
    key.parentApiKeyId ?? null,
    key.parentOauthGrantId ?? null,
  ]);
  return row!;
}

export async function findApiKeyForAuth(sql: Sql, keyId: string): Promise<ApiKeyAuthRow | undefined> {
  return runQueryRow<ApiKeyAuthRow>(sql, "findApiKeyForAuth", [keyId]);
}

export function listNamespaceKeys(sql: Sql, namespaceId: string, accountId: string): Promise<ApiKeyRow[]> {
  return runQuery<ApiKeyRow>(sql, "listNamespaceKeys", [namespaceId, accountId]);
}

/** The account's keys bound to no namespace, revoked and expired ones included, oldest first. */
export function listAccountWideKeys(sql: Sql, accountId: string): Promise<ApiKeyRow[]> {
  return runQuery<ApiKeyRow>(sql, "listAccountWideKeys", [accountId]);
}

/** False when the key is not an account-wide key of the account. */
export async function revokeAccountWideKey(sql: Sql, keyId: string, accountId: string): Promise<boolean> {
  const rows = await runQuery(sql, "revokeAccountWideKey", [keyId, accountId]);
  return rows.length > 0;
}

export async function revokeNamespaceKey(sql: Sql, keyId: string, namespaceId: string, accountId: string): Promise<boolean> {
  const rows = await runQuery(sql, "revokeNamespaceKey", [keyId, namespaceId, accountId]);
  return rows.length > 0;
}

/** Last-used times for a batch of keys, rows locked in id order first (lockKeysForTouch). */
export async function touchKeysLastUsed(sql: Sql, ids: string[], usedAt: Date[]): Promise<void> {
  await sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    await runQuery(tx, "lockKeysForTouch", [ids]);
    // Times travel as ISO strings: postgres.js binds a string[] reliably as text[] for the ::timestamptz[] cast.
    await runQuery(tx, "touchKeysLastUsed", [ids, usedAt.map((date) => date.toISOString())]);
  });
}
