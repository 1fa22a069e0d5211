import { listNamespaceOauthGrants, type OauthGrantListing } from "../db/queries/oauth-grants";
import { notFound } from "../errors/api-error";
import { revokeCredential } from "./credential-revocation";
import type { IdentityDeps } from "./identity-deps";
import type { Tenant } from "./tenant";

/** What the grant service uses: the database, and the credential cache a revoked grant leaves. */
export type OauthGrantServiceDeps = Pick<IdentityDeps, "db" | "credentials">;

/** A live OAuth grant (one approval: a device login, a consent) as a listing or a page shows it. */
export interface OauthGrant {
  id: string;
  clientId: string;
  /** The registered client's name; null for the built-in client (the caller names it). */
  clientName: string | null;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date;
}

function oauthGrantOf(row: OauthGrantListing): OauthGrant {
  return {
    id: row.id,
    clientId: row.client_id,
    clientName: row.client_name,
    scopes: row.scopes,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
  };
}

/** The namespace's live OAuth grants (one per approval: a device login, a consent). */
export async function listGrants(deps: OauthGrantServiceDeps, tenant: Tenant): Promise<OauthGrant[]> {
  return (await listNamespaceOauthGrants(deps.db.sql, tenant.namespaceId, tenant.accountId)).map(oauthGrantOf);
}

/** Ends a grant's access and refresh tokens; another tenant's grant is the 404 of a missing one. */
export async function revokeGrant(deps: OauthGrantServiceDeps, tenant: Tenant, grantId: string): Promise<{ revoked: true }> {
  const revoked = await revokeCredential({ sql: deps.db.sql, credentials: deps.credentials }, { kind: "oauth_grant", id: grantId, owner: tenant });
  if (!revoked) throw notFound("OAuth token");
  return { revoked: true };
}
