import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

export type OauthClientType = "confidential" | "public";

/** A registered OAuth client as stored; the secret only as its SHA-256 (confidential clients). */
export interface OauthClientRow {
  /** The row id (a UUID): the `oauth_client` principal and the id in management paths. */
  id: string;
  account_id: string;
  namespace_id: string;
  /** The public client id, `brc_…`. */
  client_id: string;
  client_name: string;
  client_type: OauthClientType;
  client_secret_hash: Uint8Array | null;
  redirect_uris: string[];
  allowed_scopes: string[];
  allowed_grant_types: string[];
  created_at: Date;
}

/** The registered client a `client_id` names, if any. */
export async function findOauthClientByClientId(sql: Sql, clientId: string): Promise<OauthClientRow | undefined> {
  const [row] = await runQuery<OauthClientRow>(sql, "findOauthClientByClientId", [clientId]);
  return row;
}
