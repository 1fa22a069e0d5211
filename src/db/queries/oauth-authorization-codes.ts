import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

export interface NewAuthorizationCode {
  codeHash: Uint8Array;
  clientId: string;
  oauthClientRef: string | null;
  accountId: string;
  namespaceId: string;
  redirectUri: string;
  scopes: readonly string[];
  codeChallenge: string | null;
  expiresAt: Date;
}

export async function insertAuthorizationCode(sql: Sql, code: NewAuthorizationCode): Promise<void> {
  await runQuery(sql, "insertAuthorizationCode", [
    code.codeHash,
    code.clientId,
    code.oauthClientRef,
    code.accountId,
    code.namespaceId,
    code.redirectUri,
    code.scopes,
    code.codeChallenge,
    code.expiresAt,
  ]);
}

/** Deletes authorization codes that expired before `before`. */
export async function sweepAuthorizationCodes(sql: Sql, before: Date): Promise<void> {
  await runQuery(sql, "sweepAuthorizationCodes", [before]);
}

export interface AuthorizationCodeRow {
  code_hash: Uint8Array;
  client_id: string;
  oauth_client_ref: string | null;
  account_id: string;
  namespace_id: string;
  redirect_uri: string;
  scopes: string[];
  code_challenge: string | null;
  consumed_at: Date | null;
  grant_id: string | null;
  expires_at: Date;
  namespace_archived: boolean;
  account_deleted: boolean;
}

/** In a transaction: an authorization code by its hash, locked for its exchange. */
export async function lockAuthorizationCode(tx: Sql, codeHash: Uint8Array): Promise<AuthorizationCodeRow | undefined> {
  return runQueryRow<AuthorizationCodeRow>(tx, "lockAuthorizationCode", [codeHash]);
}

export async function consumeAuthorizationCode(tx: Sql, codeHash: Uint8Array, grantId: string | null): Promise<void> {
  await runQuery(tx, "consumeAuthorizationCode", [codeHash, grantId]);
}
