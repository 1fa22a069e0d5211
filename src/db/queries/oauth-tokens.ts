import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

/** A new grant (one oauth_tokens row): its first access and refresh token, as hashes. */
export interface NewOauthGrant {
  id: string;
  accountId: string;
  namespaceId: string;
  /** The public client id (`switchyard-cli` or `brc_…`). */
  clientId: string;
  /** The registered client's row id; null for the built-in client. */
  oauthClientRef: string | null;
  accessTokenHash: Uint8Array;
  refreshTokenHash: Uint8Array;
  scopes: readonly string[];
  expiresAt: Date;
  refreshExpiresAt: Date;
}

export async function insertOauthGrant(sql: Sql, grant: NewOauthGrant): Promise<void> {
  await runQuery(sql, "insertOauthGrant", [
    grant.id,
    grant.accountId,
    grant.namespaceId,
    grant.clientId,
    grant.oauthClientRef,
    grant.accessTokenHash,
    grant.refreshTokenHash,
    grant.scopes,
    grant.expiresAt,
    grant.refreshExpiresAt,
  ]);
}

/** What authenticating an access token needs to know about its grant. */
export interface OauthGrantAuthRow {
  id: string;
  account_id: string;
  namespace_id: string;
  scopes: string[];
  expires_at: Date;
  revoked_at: Date | null;
  /** The public client id the grant was issued to, as the server recorded it at issue. */
  client_id: string;
  oauth_client_ref: string | null;
  namespace_archived: boolean;
  account_deleted: boolean;
}

export async function findOauthGrantForAuth(sql: Sql, accessTokenHash: Uint8Array): Promise<OauthGrantAuthRow | undefined> {
  return runQueryRow<OauthGrantAuthRow>(sql, "findOauthGrantForAuth", [accessTokenHash]);
}

export interface OauthGrantRefreshRow {
  id: string;
  account_id: string;
  namespace_id: string;
  client_id: string;
  oauth_client_ref: string | null;
  scopes: string[];
  refresh_expires_at: Date | null;
  revoked_at: Date | null;
  namespace_archived: boolean;
  account_deleted: boolean;
}

/** In a transaction: the grant whose current refresh token this is, locked. */
export async function lockOauthGrantByRefreshToken(tx: Sql, refreshTokenHash: Uint8Array): Promise<OauthGrantRefreshRow | undefined> {
  return runQueryRow<OauthGrantRefreshRow>(tx, "lockOauthGrantByRefreshToken", [refreshTokenHash]);
}

/** The grant a refresh token was rotated out of, if it was. */
export async function findRotatedRefreshToken(sql: Sql, refreshTokenHash: Uint8Array): Promise<string | undefined> {
  return (await runQueryRow<{ grant_id: string }>(sql, "findRotatedRefreshToken", [refreshTokenHash]))?.grant_id;
}

export interface OauthGrantRotation {
  grantId: string;
  oldRefreshTokenHash: Uint8Array;
  accessTokenHash: Uint8Array;
  refreshTokenHash: Uint8Array;
  scopes: readonly string[];
  expiresAt: Date;
  refreshExpiresAt: Date;
}

/** In the transaction that locked the grant: new tokens in place, the old refresh token remembered. */
export async function rotateOauthGrant(tx: Sql, rotation: OauthGrantRotation): Promise<void> {
  await runQuery(tx, "insertRotatedRefreshToken", [rotation.oldRefreshTokenHash, rotation.grantId]);
  await runQuery(tx, "rotateOauthGrant", [
    rotation.grantId,
    rotation.accessTokenHash,
    rotation.refreshTokenHash,
    rotation.scopes,
    rotation.expiresAt,
    rotation.refreshExpiresAt,
  ]);
}

/** The grant whose current access or refresh token has this hash. */
export async function findOauthGrantByToken(sql: Sql, tokenHash: Uint8Array): Promise<{ id: string; client_id: string } | undefined> {
  const [row] = await runQuery<{ id: string; client_id: string }>(sql, "findOauthGrantByToken", [tokenHash]);
  return row;
}

export async function revokeOauthGrant(sql: Sql, grantId: string): Promise<void> {
  await runQuery(sql, "revokeOauthGrant", [grantId]);
}

/** Batched last_used_at, like touchKeysLastUsed: rows locked in id order first. */
export async function touchOauthGrantsLastUsed(sql: Sql, ids: string[], usedAt: Date[]): Promise<void> {
  await sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    await runQuery(tx, "lockOauthGrantsForTouch", [ids]);
    await runQuery(tx, "touchOauthGrantsLastUsed", [ids, usedAt.map((date) => date.toISOString())]);
  });
}
