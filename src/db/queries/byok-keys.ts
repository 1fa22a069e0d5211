import type { Sql } from "../connect-database";
import { runCommand, runQuery, runQueryRow } from "./run-query";

/** The sealed key a request uses, and where. */
export interface ByokCredentialRow {
  kek_id: string;
  ciphertext: Uint8Array;
  api_base: string | null;
  namespace_id: string | null;
}

/** A stored key as the listing shows it: never its ciphertext. */
export interface ByokKeyRow {
  provider_name: string;
  namespace_id: string | null;
  kek_id: string;
  key_prefix: string;
  api_base: string | null;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  last_failure_at: Date | null;
  last_failure_kind: string | null;
}

/** A stored box, with the row it belongs to (for re-sealing). */
export interface SealedByokKeyRow {
  account_id: string;
  provider_name: string;
  namespace_id: string | null;
  kek_id: string;
  ciphertext: Uint8Array;
}

/** What an upload writes; `namespaceId` null: the account's key. */
export interface ByokKeyWrite {
  accountId: string;
  namespaceId: string | null;
  providerName: string;
  kekId: string;
  box: Uint8Array;
  keyPrefix: string;
  apiBase: string | null;
}

/** One use of a key; `namespaceId` null: the account's key. */
export interface ByokKeyUse {
  accountId: string;
  namespaceId: string | null;
  providerId: string;
  at: Date;
}

/** The namespace's own key for the provider first, else the account's; `namespaceId` null: the account's alone. */
export async function findByokCredential(sql: Sql, accountId: string, providerId: string, namespaceId: string | null): Promise<ByokCredentialRow | undefined> {
  return runQueryRow<ByokCredentialRow>(sql, "findByokCredential", [accountId, providerId, namespaceId]);
}

export async function recordByokRefusal(sql: Sql, accountId: string, providerId: string, keyNamespaceId: string | null, kind: string): Promise<void> {
  await runQuery(sql, "recordByokRefusal", [accountId, providerId, keyNamespaceId, kind]);
}

/**
 * Writes `last_used_at` for a batch of uses in one transaction, the rows locked first in
 * one order (instances flushing overlapping batches cannot deadlock).
 */
export async function recordByokUses(sql: Sql, uses: readonly ByokKeyUse[]): Promise<void> {
  const accounts = uses.map((use) => use.accountId);
  const providers = uses.map((use) => use.providerId);
  // '' stands for an account-wide key (no namespace id is empty): arrays bind as text[].
  const scopes = uses.map((use) => use.namespaceId ?? "");
  // Times travel as ISO strings: postgres.js binds a string[] reliably for the ::timestamptz[] cast.
  const times = uses.map((use) => use.at.toISOString());
  await sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    await runQuery(tx, "lockByokKeysForUse", [accounts, providers, scopes]);
    await runQuery(tx, "recordByokUses", [accounts, providers, scopes, times]);
  });
}

export function listByokKeysNotUnder(sql: Sql, kekId: string): Promise<SealedByokKeyRow[]> {
  return runQuery<SealedByokKeyRow>(sql, "listByokKeysNotUnder", [kekId]);
}

/** Replaces `row`'s box with `box` under `kekId` if the row still holds the box read; true when it did. */
export async function resealByokKey(sql: Sql, row: SealedByokKeyRow, kekId: string, box: Uint8Array): Promise<boolean> {
  const changed = await runCommand(sql, "resealByokKey", [kekId, box, row.account_id, row.provider_name, row.namespace_id, row.kek_id, Buffer.from(row.ciphertext)]);
  return changed === 1;
}

export async function countByokKeysNotUnder(sql: Sql, kekId: string): Promise<number> {
  const [row] = await runQuery<{ count: number }>(sql, "countByokKeysNotUnder", [kekId]);
  return row!.count;
}

/** `namespaceId` null: every key of the account; else the namespace's and the account's. */
export function listByokKeys(sql: Sql, accountId: string, namespaceId: string | null): Promise<ByokKeyRow[]> {
  return runQuery<ByokKeyRow>(sql, "listByokKeys", [accountId, namespaceId]);
}

/** Stores the key of its scope (the account's or a namespace's), replacing the previous one. */
export async function upsertByokKey(sql: Sql, key: ByokKeyWrite): Promise<void> {
  if (key.namespaceId === null) {
    await runQuery(sql, "upsertAccountByokKey", [key.accountId, key.providerName, key.kekId, key.box, key.keyPrefix, key.apiBase]);
  } else {
    await runQuery(sql, "upsertNamespaceByokKey", [key.accountId, key.namespaceId, key.providerName, key.kekId, key.box, key.keyPrefix, key.apiBase]);
  }
}

/** Deletes one key (`namespaceId` null: the account's); true when there was one. */
export async function deleteByokKey(sql: Sql, accountId: string, providerName: string, namespaceId: string | null): Promise<boolean> {
  return (await runCommand(sql, "deleteByokKey", [accountId, providerName, namespaceId])) > 0;
}
