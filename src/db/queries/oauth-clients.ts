import type { Sql } from "../connect-database";
import type { TenantIds } from "./tenant-ids";
import { runQuery, runQueryRow } from "./run-query";

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
  return runQueryRow<OauthClientRow>(sql, "findOauthClientByClientId", [clientId]);
}

/** The email of the account that registered a client (by its row id). */
export async function findOauthClientOwnerEmail(sql: Sql, id: string): Promise<string | undefined> {
  return (await runQueryRow<{ email: string }>(sql, "findOauthClientOwnerEmail", [id]))?.email;
}

export interface NewOauthClient {
  id: string;
  clientId: string;
  clientName: string;
  clientType: OauthClientType;
  clientSecretHash: Uint8Array | null;
  redirectUris: string[];
  allowedScopes: string[];
  allowedGrantTypes: string[];
}

export async function insertOauthClient(sql: Sql, tenant: TenantIds, client: NewOauthClient): Promise<OauthClientRow> {
  const [row] = await runQuery<OauthClientRow>(sql, "insertOauthClient", [
    client.id,
    tenant.accountId,
    tenant.namespaceId,
    client.clientId,
    client.clientName,
    client.clientType,
    client.clientSecretHash,
    client.redirectUris,
    client.allowedScopes,
    client.allowedGrantTypes,
  ]);
  return row!;
}

export function listNamespaceOauthClients(sql: Sql, tenant: TenantIds): Promise<OauthClientRow[]> {
  return runQuery<OauthClientRow>(sql, "listNamespaceOauthClients", [tenant.namespaceId, tenant.accountId]);
}

/** The namespace's client named by its row id or its public `client_id`. */
export async function findNamespaceOauthClient(sql: Sql, tenant: TenantIds, idOrClientId: string): Promise<OauthClientRow | undefined> {
  return runQueryRow<OauthClientRow>(sql, "findNamespaceOauthClient", [idOrClientId, tenant.namespaceId, tenant.accountId]);
}

/** The attributes a PUT may change; undefined leaves one unchanged, a list replaces the stored one whole. */
export interface OauthClientChanges {
  clientName?: string;
  redirectUris?: string[];
  allowedScopes?: string[];
  allowedGrantTypes?: string[];
}

export async function updateOauthClient(sql: Sql, tenant: TenantIds, id: string, changes: OauthClientChanges): Promise<OauthClientRow | undefined> {
  return runQueryRow<OauthClientRow>(sql, "updateOauthClient", [
    id,
    tenant.namespaceId,
    tenant.accountId,
    changes.clientName ?? null,
    changes.redirectUris ?? null,
    changes.allowedScopes ?? null,
    changes.allowedGrantTypes ?? null,
  ]);
}

/**
 * Deletes a client with everything issued to it: its grants are revoked (their ids are
 * returned for the credential caches), its pending device and authorization codes and its
 * policy bindings are deleted. Undefined when the namespace has no such client.
 */
export async function deleteOauthClient(sql: Sql, tenant: TenantIds, id: string): Promise<{ revokedGrantIds: string[] } | undefined> {
  return sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    const [deleted] = await runQuery<{ id: string }>(tx, "deleteOauthClient", [id, tenant.namespaceId, tenant.accountId]);
    if (!deleted) return undefined;
    const grants = await runQuery<{ id: string }>(tx, "revokeOauthClientGrants", [id]);
    await runQuery(tx, "deleteOauthClientCodes", [id]);
    await runQuery(tx, "deleteOauthClientBindings", [id]);
    return { revokedGrantIds: grants.map((grant) => grant.id) };
  });
}

/** A client as a policy binding target, when it belongs to the account. */
export async function findOauthClientPrincipal(sql: Sql, id: string, accountId: string): Promise<{ id: string; namespace_id: string } | undefined> {
  const [row] = await runQuery<{ id: string; namespace_id: string }>(sql, "findOauthClientPrincipal", [id, accountId]);
  return row;
}
