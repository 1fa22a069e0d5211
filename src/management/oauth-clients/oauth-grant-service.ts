import { listNamespaceOauthGrants, revokeNamespaceOauthGrant, type OauthGrantListing } from "../../db/queries/oauth-grants";
import type { Services } from "../../services";
import { revokeCredential } from "../credential-revocation";
import { isoOrNull } from "../serialize";
import type { Tenant } from "../tenant";

/** What the grant service uses: the database, and the credential cache a revoked grant leaves. */
export type OauthGrantServiceDeps = Pick<Services, "db" | "credentials">;

/** A grant as `GET …/oauth/tokens` lists it (docs/api/identity.md "Identity: OAuth, clients, accounts"). */
export function grantEnvelope(row: OauthGrantListing) {
  return {
    id: row.id,
    client_id: row.client_id,
    client_name: row.client_name ?? row.client_id,
    scopes: row.scopes,
    created_at: row.created_at.toISOString(),
    last_used_at: isoOrNull(row.last_used_at),
    expires_at: row.expires_at.toISOString(),
  };
}

/** The namespace's live OAuth grants (one per approval: a device login, a consent). */
export function listGrants(deps: OauthGrantServiceDeps, tenant: Tenant): Promise<OauthGrantListing[]> {
  return listNamespaceOauthGrants(deps.db.sql, tenant.namespaceId, tenant.accountId);
}

/** Ends a grant's access and refresh tokens; another tenant's grant is the 404 of a missing one. */
export function revokeGrant(deps: OauthGrantServiceDeps, tenant: Tenant, grantId: string): Promise<{ revoked: true }> {
  return revokeCredential(deps, grantId, "OAuth token", () => revokeNamespaceOauthGrant(deps.db.sql, grantId, tenant.namespaceId, tenant.accountId));
}
