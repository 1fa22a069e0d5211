import type { Sql } from "../connect-database";
import { runQuery } from "./run-query";

/** A live OAuth grant as `GET …/oauth/tokens` lists it. */
export interface OauthGrantListing {
  id: string;
  client_id: string;
  /** The registered client's name; null for the built-in client (the caller names it). */
  client_name: string | null;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date;
}

export function listNamespaceOauthGrants(sql: Sql, namespaceId: string, accountId: string): Promise<OauthGrantListing[]> {
  return runQuery<OauthGrantListing>(sql, "listNamespaceOauthGrants", [namespaceId, accountId]);
}

/** Revokes a live grant of the namespace; false when there is none by that id. */
export async function revokeNamespaceOauthGrant(sql: Sql, id: string, namespaceId: string, accountId: string): Promise<boolean> {
  return (await runQuery(sql, "revokeNamespaceOauthGrant", [id, namespaceId, accountId])).length > 0;
}

/** A live grant of the account as a policy binding target. */
export async function findOauthGrantPrincipal(
  sql: Sql,
  id: string,
  accountId: string,
): Promise<{ id: string; namespace_id: string; oauth_client_ref: string | null } | undefined> {
  const [row] = await runQuery<{ id: string; namespace_id: string; oauth_client_ref: string | null }>(sql, "findOauthGrantPrincipal", [id, accountId]);
  return row;
}
