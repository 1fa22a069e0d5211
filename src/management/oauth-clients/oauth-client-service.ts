import { randomBytes, randomUUID } from "node:crypto";
import { sha256 } from "../../auth/tokens";
import {
  deleteOauthClient,
  findNamespaceOauthClient,
  insertOauthClient,
  listNamespaceOauthClients,
  updateOauthClient,
  type OauthClientRow,
} from "../../db/queries/oauth-clients";
import { notFound } from "../../errors/api-error";
import {
  checkAllowedScopes,
  checkCodeClientHasRedirect,
  checkGrantTypes,
  checkRedirectUris,
  DEFAULT_ALLOWED_SCOPES,
  type validateCreate,
  type validateUpdate,
} from "./oauth-client-body";
import { checkClientName } from "./client-name";
import type { Services } from "../../services";
import { forgetCredentials } from "../../identity/credential-revocation";
import type { Tenant } from "../../identity/tenant";

type CreateBody = ReturnType<typeof validateCreate>;
type UpdateBody = ReturnType<typeof validateUpdate>;

/** What the client service uses: the database, and the credential cache to drop revoked grants from. */
export type OauthClientServiceDeps = Pick<Services, "db" | "credentials">;

/** The client as every route returns it (docs/api/identity.md "Identity: OAuth, clients, accounts"): never the secret or its hash. */
export function clientEnvelope(row: OauthClientRow) {
  return {
    id: row.id,
    client_id: row.client_id,
    client_name: row.client_name,
    client_type: row.client_type,
    redirect_uris: row.redirect_uris,
    allowed_scopes: row.allowed_scopes,
    allowed_grant_types: row.allowed_grant_types,
    created_at: row.created_at.toISOString(),
  };
}

export async function listClients(deps: OauthClientServiceDeps, tenant: Tenant) {
  return { data: (await listNamespaceOauthClients(deps.db.sql, tenant)).map(clientEnvelope) };
}

export async function getClient(deps: OauthClientServiceDeps, tenant: Tenant, idOrClientId: string) {
  const row = await findNamespaceOauthClient(deps.db.sql, tenant, idOrClientId);
  if (!row) throw notFound("OAuth client");
  return clientEnvelope(row);
}

/**
 * Registers a client. A confidential client gets a secret, returned here once and stored
 * only as its SHA-256; a public client has none and must use PKCE.
 */
export async function createClient(deps: OauthClientServiceDeps, tenant: Tenant, body: CreateBody) {
  const grantTypes = checkGrantTypes(body.allowed_grant_types);
  const redirectUris = checkRedirectUris(body.redirect_uris ?? []);
  checkCodeClientHasRedirect(grantTypes, redirectUris);
  const allowedScopes = body.allowed_scopes === undefined ? [...DEFAULT_ALLOWED_SCOPES] : checkAllowedScopes(body.allowed_scopes);
  const secret = body.client_type === "confidential" ? `brcs_${randomBytes(32).toString("base64url")}` : null;
  const row = await insertOauthClient(deps.db.sql, tenant, {
    id: randomUUID(),
    clientId: `brc_${randomBytes(16).toString("base64url")}`,
    clientName: checkClientName(body.client_name),
    clientType: body.client_type,
    clientSecretHash: secret === null ? null : sha256(secret),
    redirectUris,
    allowedScopes,
    allowedGrantTypes: grantTypes,
  });
  return { ...clientEnvelope(row), client_secret: secret };
}

/** Changes what the body names; each list replaces the stored one whole. */
export async function updateClient(deps: OauthClientServiceDeps, tenant: Tenant, idOrClientId: string, body: UpdateBody) {
  const current = await findNamespaceOauthClient(deps.db.sql, tenant, idOrClientId);
  if (!current) throw notFound("OAuth client");
  const grantTypes = body.allowed_grant_types === undefined ? current.allowed_grant_types : checkGrantTypes(body.allowed_grant_types);
  const redirectUris = body.redirect_uris === undefined ? current.redirect_uris : checkRedirectUris(body.redirect_uris);
  checkCodeClientHasRedirect(grantTypes, redirectUris);
  const row = await updateOauthClient(deps.db.sql, tenant, current.id, {
    clientName: body.client_name === undefined ? undefined : checkClientName(body.client_name),
    redirectUris: body.redirect_uris === undefined ? undefined : redirectUris,
    allowedScopes: body.allowed_scopes === undefined ? undefined : checkAllowedScopes(body.allowed_scopes),
    allowedGrantTypes: body.allowed_grant_types === undefined ? undefined : grantTypes,
  });
  if (!row) throw notFound("OAuth client");
  return clientEnvelope(row);
}

/** Deletes a client; every token issued to it stops working (at once on this instance). */
export async function removeClient(deps: OauthClientServiceDeps, tenant: Tenant, idOrClientId: string) {
  const current = await findNamespaceOauthClient(deps.db.sql, tenant, idOrClientId);
  if (!current) throw notFound("OAuth client");
  const deleted = await deleteOauthClient(deps.db.sql, tenant, current.id);
  if (!deleted) throw notFound("OAuth client");
  forgetCredentials(deps, deleted.revokedGrantIds);
  return { deleted: true };
}

